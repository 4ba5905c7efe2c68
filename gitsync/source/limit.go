package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

	"github.com/knitops/knit/internal/bytesize"
)

// DefaultMaxFetchBytes is the default of Cache.MaxFetchBytes: a pack
// bigger than this is a repository holding build outputs or media, not
// what knit deploys from.
const DefaultMaxFetchBytes = 100 << 20

// TooLargeError is a fetch that Cache.MaxFetchBytes cut off: the commits
// it had to bring weigh more. Nothing of it was kept, and asking for the
// same commits again fails at once; a new push, or a higher limit, is
// fetched again.
type TooLargeError struct {
	// URL is the remote.
	URL string
	// Limit is the limit, in bytes.
	Limit int64
	// Hint says how to raise the limit (Cache.LimitHint).
	Hint string
}

func (e *TooLargeError) Error() string {
	msg := fmt.Sprintf("fetch from %s stopped at %s, the limit of one fetch (which brings every file of the branch heads), and nothing of it was kept; take the large files out of the branch (build outputs and media do not belong in the repository knit deploys from)",
		e.URL, bytesize.Format(e.Limit))
	if e.Hint != "" {
		msg += ", or " + e.Hint
	}
	return msg
}

func (c *Cache) maxFetchBytes() int64 {
	if c.MaxFetchBytes == 0 {
		return DefaultMaxFetchBytes
	}
	return c.MaxFetchBytes
}

// refusal remembers a fetch refused as too large: the commits it wanted,
// under which limit.
type refusal struct {
	wants []plumbing.Hash
	limit int64
	err   error
}

// matches returns the refusal's error when a fetch of wants under limit
// would be the same one, nil otherwise.
func (f *refusal) matches(wants []plumbing.Hash, limit int64) error {
	if f == nil || f.limit != limit || len(f.wants) != len(wants) {
		return nil
	}
	for _, h := range wants {
		if !slices.Contains(f.wants, h) {
			return nil
		}
	}
	return f.err
}

// limitedStorer is a cache repository's storage as one fetch writes to
// it: the pack stops at limit bytes (no limit when negative), and the new
// pack joins the index readers use under the repository's write lock.
type limitedStorer struct {
	*filesystem.Storage
	repo  *repo
	limit int64
	// stop cancels the fetch: its next read from the remote fails, which
	// closes the connection (or kills the local git) and ends it.
	stop    context.CancelFunc
	over    bool  // the pack reached the limit
	written int64 // bytes of the pack
}

// PackfileWriter is where go-git writes the pack a fetch receives.
func (s *limitedStorer) PackfileWriter() (io.WriteCloser, error) {
	w, err := s.Storage.PackfileWriter()
	if err != nil {
		return nil, err
	}
	pw, ok := w.(*dotgit.PackWriter)
	if !ok {
		_ = w.Close()
		return nil, fmt.Errorf("unexpected pack writer %T", w)
	}
	if notify := pw.Notify; notify != nil {
		pw.Notify = func(h plumbing.Hash, idx *idxfile.Writer) {
			s.repo.rw.Lock()
			defer s.repo.rw.Unlock()
			notify(h, idx)
		}
	}
	return &limitedWriter{WriteCloser: w, s: s}, nil
}

// limitedWriter counts a pack's bytes. The write that would pass the
// limit, and any after it, are dropped, and the fetch is cancelled, which
// ends it at its next read while the pack streams in. (Failing the write
// instead would leave go-git waiting for a local git it never reads from
// again to exit.)
type limitedWriter struct {
	io.WriteCloser
	s *limitedStorer
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if !w.s.over && w.s.limit >= 0 && w.s.written+int64(len(p)) > w.s.limit {
		w.s.over = true
		w.s.stop()
	}
	if w.s.over {
		return len(p), nil
	}
	n, err := w.WriteCloser.Write(p)
	w.s.written += int64(n)
	return n, err
}

// releaseAfterBytes is the size of a fetched pack after which the memory
// its indexing took is given back at once (releaseMemory).
const releaseAfterBytes = 16 << 20

// releaseMemory gives the memory a large fetch took back to the system.
// go-git indexes a fetched pack holding each object whole once, in a
// buffer it keeps in a sync.Pool, which lasts two garbage collections: in
// a process that allocates little (a controller between syncs) that is
// minutes of a buffer the size of the largest file pushed, on top of what
// the runtime keeps of freed memory. Two forced collections drop it and
// return it; a large fetch is rare enough for them to cost nothing.
func releaseMemory() {
	debug.FreeOSMemory()
	debug.FreeOSMemory()
}

// discard removes what a fetch cut off left: the pack go-git was writing
// and the shallow commits it recorded before the pack arrived.
func (r *repo) discard(shallow []plumbing.Hash) error {
	err := r.removeTempPacks()
	if serr := r.st.SetShallow(shallow); serr != nil {
		err = errors.Join(err, fmt.Errorf("restore shallow commits of %s: %w", r.dir, serr))
	}
	return err
}

// removeTempPacks removes the temporary files go-git keeps of a pack it
// failed to write. Fetches and collections hold r.mu: none is being
// written.
func (r *repo) removeTempPacks() error {
	tmp, err := filepath.Glob(filepath.Join(r.dir, "objects", "pack", "tmp_pack_*"))
	errs := []error{err}
	for _, f := range tmp {
		errs = append(errs, os.Remove(f))
	}
	return errors.Join(errs...)
}
