package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/knitops/knit/gitsync/egress"
)

// remoteName is the name branches are fetched under in a cache repository.
const remoteName = "origin"

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

	mu    sync.Mutex
	repos map[string]*repo
}

type repo struct {
	mu  sync.Mutex // serialises fetches; reads go through go-git's storage
	git *git.Repository
}

// Fetched is the head of each branch a Fetch asked for.
type Fetched struct {
	// Heads maps branch name to its full commit SHA.
	Heads map[string]string
	// Missing lists branches the remote does not have.
	Missing []string
}

// Fetch brings branches of url into the cache repository named key (e.g.
// "<namespace>/<name>") and reports their heads. auth may be nil.
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
	for _, b := range branches {
		h, ok := refs[b]
		if !ok {
			out.Missing = append(out.Missing, b)
			continue
		}
		out.Heads[b] = h.String()
		if !r.has(h) {
			specs = append(specs, config.RefSpec(fmt.Sprintf("+refs/heads/%s:refs/remotes/%s/%s", b, remoteName, b)))
		}
	}
	if len(specs) == 0 {
		return out, nil
	}
	remote := git.NewRemote(r.git.Storer, &config.RemoteConfig{Name: remoteName, URLs: []string{url}})
	// Shallow: knit deploys branch heads, never walks history, so one
	// commit per branch is all a fetch needs to bring.
	err = remote.FetchContext(ctx, &git.FetchOptions{RemoteName: remoteName, RefSpecs: specs, Auth: auth, Force: true, Tags: git.NoTags, Depth: 1})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return Fetched{}, fmt.Errorf("fetch %v from %s: %w", branches, url, err)
	}
	return out, nil
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
		if ref.Name().IsBranch() && ref.Type() == plumbing.HashReference {
			out[ref.Name().Short()] = ref.Hash()
		}
	}
	return out, nil
}

func (r *repo) has(h plumbing.Hash) bool {
	_, err := r.git.CommitObject(h)
	return err == nil
}

// Commit reads a fetched commit of the repository named key.
func (c *Cache) Commit(key, sha string) (*object.Commit, error) {
	r, err := c.open(key)
	if err != nil {
		return nil, err
	}
	commit, err := r.git.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		return nil, fmt.Errorf("commit %s of %s: %w", sha, key, err)
	}
	return commit, nil
}

// Forget drops the cache repository named key, when its GitRepository is
// deleted.
func (c *Cache) Forget(key string) error {
	c.mu.Lock()
	delete(c.repos, key)
	c.mu.Unlock()
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
	g, err := git.PlainOpen(dir)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return nil, fmt.Errorf("cache dir: %w", err)
		}
		g, err = git.PlainInit(dir, true)
	}
	if err != nil {
		return nil, fmt.Errorf("open cache repository %s: %w", dir, err)
	}
	if c.repos == nil {
		c.repos = map[string]*repo{}
	}
	r := &repo{git: g}
	c.repos[key] = r
	return r, nil
}
