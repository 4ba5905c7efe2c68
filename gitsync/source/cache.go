package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/knitops/knit/gitsync/egress"
)

// remoteName is the name branches are fetched under in a cache repository.
const remoteName = "origin"

// Reading limits of a cache repository. Blobs over largeObjectBytes are
// streamed from their pack when read (a checkout copies them to disk
// without holding them), never decoded into memory whole; objectCacheBytes
// bounds the decoded objects (trees, commits, small files) each
// repository keeps for the next read.
const (
	largeObjectBytes = 1 << 20
	objectCacheBytes = 8 << 20
)

// Cache holds one bare repository per source under Dir.
type Cache struct {
	// Dir is where the bare cache repositories live, one per key.
	Dir string
	// Egress is where fetches may go, asked at each fetch: URLs with
	// another scheme than http(s) are refused before any connection, and
	// each connection on the address it resolved to (egress.DialContext).
	// Nil is the default policy, which refuses local directories and
	// loopback too: a test fetching from them allows them explicitly.
	Egress func() *egress.Policy
	// MaxFetchBytes bounds the pack one fetch may bring: every file of
	// the heads it asks for, since a shallow fetch is sent whole trees, so
	// in effect the size of a repository's branch heads. A bigger one is
	// cut off while it streams, nothing of it is kept, and Fetch returns a
	// *TooLargeError. 0 is DefaultMaxFetchBytes; negative is no limit.
	MaxFetchBytes int64
	// LimitHint tells the user of a *TooLargeError how to raise
	// MaxFetchBytes where this Cache runs, e.g. "raise it with knit dev
	// --git-max-fetch-size". Empty says nothing.
	LimitHint string
	// GCBytes is when a fetch collects the garbage of its repository
	// (gc.go): once its objects weigh GCBytes more than what the last
	// collection kept. 0 is DefaultGCBytes; negative collects after every
	// fetch that brought objects.
	GCBytes int64
	// Retain names the commits of the repository named key that a
	// collection must keep besides the heads and the heads they replaced
	// (e.g. those of live Revisions not checked out yet); nil keeps none.
	// An error skips the collection.
	Retain func(ctx context.Context, key string) ([]string, error)

	mu    sync.Mutex
	repos map[string]*repo
}

// repo is one cache repository. A fetch writes into the storage that
// readers use; what a reader may see half-done is guarded by rw.
type repo struct {
	mu sync.Mutex // serialises fetches and collections
	// rw guards the storage's pack list: Checkout reads under RLock, the
	// registration of a new pack and the removal of old ones hold Lock.
	rw  sync.RWMutex
	git *git.Repository
	st  *filesystem.Storage
	dir string

	// heads are the commits the last fetch reported as heads, and
	// previous those of the fetch before that reported others: a
	// Revision of one may be about to read it (Checkout), so a collection
	// keeps them.
	heads, previous []plumbing.Hash
	// refused is the last fetch refused as too large, so that asking for
	// the same commits again fails without downloading them again.
	refused *refusal
	// collected is what the objects weighed after the last collection.
	collected int64
}

// Fetched is the head of each branch a Fetch asked for.
type Fetched struct {
	// Heads maps branch name to its full commit SHA.
	Heads map[string]string
	// Missing lists branches the remote does not have.
	Missing []string
}

// Fetch brings branches of url into the cache repository named key (e.g.
// "<namespace>/<name>") and reports their heads. auth may be nil. A fetch
// that would bring more than MaxFetchBytes fails with a *TooLargeError
// and keeps nothing. After a fetch that brought objects, the repository's
// garbage is collected when it grew enough (GCBytes).
func (c *Cache) Fetch(ctx context.Context, key, url string, branches []string, auth transport.AuthMethod) (Fetched, error) {
	ctx, err := c.guard(ctx, url)
	if err != nil {
		return Fetched{}, err
	}
	r, err := c.open(key)
	if err != nil {
		return Fetched{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	refs, err := remoteBranches(ctx, url, auth)
	if err != nil {
		return Fetched{}, fmt.Errorf("list branches of %s: %w", url, err)
	}
	out := Fetched{Heads: map[string]string{}}
	var specs []config.RefSpec
	var wants []plumbing.Hash
	for _, b := range branches {
		h, ok := refs[b]
		if !ok {
			out.Missing = append(out.Missing, b)
			continue
		}
		out.Heads[b] = h.String()
		if !r.has(h) {
			specs = append(specs, config.RefSpec(fmt.Sprintf("+%s:refs/remotes/%s/%s", remoteRef(b), remoteName, b)))
			wants = append(wants, h)
		}
	}
	if len(specs) > 0 {
		if err := c.fetch(ctx, r, url, specs, wants, auth); err != nil {
			return Fetched{}, err
		}
	}
	if err := r.track(out.Heads); err != nil {
		return Fetched{}, err
	}
	if len(specs) > 0 {
		c.collectIfGrown(ctx, key, r)
	}
	return out, nil
}

// fetch brings the commits specs name, shallow, within MaxFetchBytes.
func (c *Cache) fetch(ctx context.Context, r *repo, url string, specs []config.RefSpec, wants []plumbing.Hash, auth transport.AuthMethod) error {
	limit := c.maxFetchBytes()
	if err := r.refused.matches(wants, limit); err != nil {
		return err
	}
	shallow, err := r.st.Shallow()
	if err != nil {
		return fmt.Errorf("read shallow commits of %s: %w", r.dir, err)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	store := &limitedStorer{Storage: r.st, repo: r, limit: limit, stop: stop}
	remote := git.NewRemote(store, &config.RemoteConfig{Name: remoteName, URLs: []string{url}})
	// Shallow: knit deploys branch heads, never walks history, so one
	// commit per branch is all a fetch needs to bring.
	err = remote.FetchContext(ctx, &git.FetchOptions{RemoteName: remoteName, RefSpecs: specs, Auth: auth, Force: true, Tags: git.NoTags, Depth: 1})
	if store.over {
		tooLarge := &TooLargeError{URL: url, Limit: limit, Hint: c.LimitHint}
		r.refused = &refusal{wants: wants, limit: limit, err: tooLarge}
		if err := r.discard(shallow); err != nil {
			return errors.Join(tooLarge, err)
		}
		return tooLarge
	}
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return fmt.Errorf("fetch %s: %w", url, err)
	}
	r.refused = nil
	if store.written >= releaseAfterBytes {
		releaseMemory()
	}
	return nil
}

// remoteBranches lists the branch heads of url without fetching objects:
// the cheap question asked on every poll.
func remoteBranches(ctx context.Context, url string, auth transport.AuthMethod) (map[string]plumbing.Hash, error) {
	remote := git.NewRemote(nil, &config.RemoteConfig{Name: remoteName, URLs: []string{url}})
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth})
	if err != nil {
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return map[string]plumbing.Hash{}, nil
		}
		return nil, err
	}
	out := map[string]plumbing.Hash{}
	for _, ref := range refs {
		if ref.Type() != plumbing.HashReference {
			continue
		}
		name := ref.Name().String()
		switch {
		case isPullRef(name):
			out[name] = ref.Hash()
		case ref.Name().IsBranch() && !strings.HasPrefix(ref.Name().Short(), "refs/"):
			// A branch named like a pull ref would pass for one.
			out[ref.Name().Short()] = ref.Hash()
		}
	}
	return out, nil
}

// isPullRef says whether name is a forge's ref of a pull request's head
// (GitHub and Gitea refs/pull/<n>/head, GitLab
// refs/merge-requests/<n>/head): how a fork's head is fetched, by its
// full name, where Fetch's other names are branches.
func isPullRef(name string) bool {
	return (strings.HasPrefix(name, "refs/pull/") || strings.HasPrefix(name, "refs/merge-requests/")) && strings.HasSuffix(name, "/head")
}

// remoteRef is the remote ref Fetch's name b stands for.
func remoteRef(b string) string {
	if isPullRef(b) {
		return b
	}
	return "refs/heads/" + b
}

func (r *repo) has(h plumbing.Hash) bool {
	_, err := r.git.CommitObject(h)
	return err == nil
}

// track points the repository's branches at heads, drops those of
// branches no longer asked for, so that they stop holding objects, and
// notes the heads, and those they replaced.
func (r *repo) track(heads map[string]string) error {
	const prefix = "refs/remotes/" + remoteName + "/"
	refs, err := r.st.IterReferences()
	if err != nil {
		return fmt.Errorf("list refs of %s: %w", r.dir, err)
	}
	have := map[string]plumbing.Hash{}
	_ = refs.ForEach(func(ref *plumbing.Reference) error {
		if b, ok := strings.CutPrefix(ref.Name().String(), prefix); ok {
			have[b] = ref.Hash()
		}
		return nil
	})
	for b := range have {
		if _, ok := heads[b]; ok {
			continue
		}
		if err := r.st.RemoveReference(plumbing.ReferenceName(prefix + b)); err != nil {
			return fmt.Errorf("remove branch %s of %s: %w", b, r.dir, err)
		}
	}
	for b, sha := range heads {
		h := plumbing.NewHash(sha)
		if have[b] == h {
			continue
		}
		if err := r.st.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(prefix+b), h)); err != nil {
			return fmt.Errorf("point branch %s of %s at %s: %w", b, r.dir, sha, err)
		}
	}
	r.noteHeads(heads)
	return nil
}

// noteHeads remembers heads, and the heads they replace when they differ
// from the last ones.
func (r *repo) noteHeads(heads map[string]string) {
	var now []plumbing.Hash
	for _, sha := range heads {
		now = append(now, plumbing.NewHash(sha))
	}
	slices.SortFunc(now, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
	if !slices.Equal(now, r.heads) {
		r.previous, r.heads = r.heads, now
	}
}

// Commit reads a fetched commit of the repository named key. Its tree and
// files are read from the cache repository when asked for: read them
// before the next Fetch of key, which may collect them (the GitRepository
// reconciler fetches and renders a repository in one pass, one pass at a
// time), or use Checkout, which holds the repository while it reads.
func (c *Cache) Commit(key, sha string) (*object.Commit, error) {
	r, err := c.open(key)
	if err != nil {
		return nil, err
	}
	r.rw.RLock()
	defer r.rw.RUnlock()
	return r.commit(key, sha)
}

func (r *repo) commit(key, sha string) (*object.Commit, error) {
	commit, err := r.git.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		return nil, fmt.Errorf("commit %s of %s: %w", sha, key, err)
	}
	return commit, nil
}

// Forget drops the cache repository named key, when its GitRepository is
// deleted; it waits for a fetch or checkout of it to finish.
func (c *Cache) Forget(key string) error {
	c.mu.Lock()
	r := c.repos[key]
	delete(c.repos, key)
	c.mu.Unlock()
	if r != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.rw.Lock()
		defer r.rw.Unlock()
	}
	return os.RemoveAll(c.path(key))
}

func (c *Cache) path(key string) string { return filepath.Join(c.Dir, filepath.FromSlash(key)+".git") }

func (c *Cache) open(key string) (*repo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.repos[key]; ok {
		return r, nil
	}
	dir := c.path(key)
	r, err := openRepo(dir)
	if err != nil {
		return nil, fmt.Errorf("open cache repository %s: %w", dir, err)
	}
	if c.repos == nil {
		c.repos = map[string]*repo{}
	}
	c.repos[key] = r
	return r, nil
}

// openRepo opens, or creates, the bare repository dir with knit's reading
// limits.
func openRepo(dir string) (*repo, error) {
	g, err := git.PlainOpen(dir)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return nil, err
		}
		g, err = git.PlainInit(dir, true)
	}
	if err != nil {
		return nil, err
	}
	plain, ok := g.Storer.(*filesystem.Storage)
	if !ok {
		return nil, fmt.Errorf("unexpected storage %T", g.Storer)
	}
	st := filesystem.NewStorageWithOptions(plain.Filesystem(), cache.NewObjectLRU(objectCacheBytes),
		filesystem.Options{LargeObjectThreshold: largeObjectBytes})
	if g, err = git.Open(st, nil); err != nil {
		return nil, err
	}
	r := &repo{git: g, st: st, dir: dir}
	return r, r.index()
}

// index loads the storage's pack index now, under Lock: go-git loads it on
// the first read, and two first reads at once would both write it.
func (r *repo) index() error {
	r.rw.Lock()
	defer r.rw.Unlock()
	r.st.Reindex()
	if err := r.st.HasEncodedObject(plumbing.ZeroHash); err != nil && !errors.Is(err, plumbing.ErrObjectNotFound) {
		return fmt.Errorf("index packs of %s: %w", r.dir, err)
	}
	return nil
}
