package source

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-logr/logr"
)

// Garbage collection of a cache repository. Each fetch adds a pack of the
// commits it was asked for, and nothing removed the packs of commits no
// branch points at any more: a repository pushed 50–150 MB blobs kept
// every one (a 669 MB cache was seen). A collection
// writes what the commits still wanted reach (their trees and files,
// never history: a shallow cache has none) into one new pack, and
// removes every other pack and loose object. What is kept is the heads,
// the heads they replaced (the Revision of a head synced just before may
// not have checked it out yet) and what Cache.Retain names.

// DefaultGCBytes is the default of Cache.GCBytes: the garbage a
// repository may hold before a fetch collects it.
const DefaultGCBytes = 32 << 20

// collectIfGrown collects the garbage of r once it weighs GCBytes more
// than what the last collection kept. A collection that fails is logged:
// the fetch stands.
func (c *Cache) collectIfGrown(ctx context.Context, key string, r *repo) {
	log := logr.FromContextOrDiscard(ctx).WithValues("repository", key)
	size, err := objectsSize(r.dir)
	if err != nil {
		log.Error(err, "Cannot size the cache repository; not collecting its garbage")
		return
	}
	if !c.grown(size, r.collected) {
		return
	}
	keep, err := c.keep(ctx, key, r)
	if err != nil {
		log.Error(err, "Cannot tell which commits to keep; not collecting the cache repository's garbage")
		return
	}
	log.V(1).Info("Collecting the cache repository's garbage", "bytes", size, "commits", len(keep))
	if err := r.collect(keep); err != nil {
		log.Error(err, "Cannot collect the cache repository's garbage")
		return
	}
	if r.collected, err = objectsSize(r.dir); err == nil {
		log.V(1).Info("Collected the cache repository's garbage", "before", size, "after", r.collected)
	}
}

func (c *Cache) grown(size, collected int64) bool {
	garbage := c.GCBytes
	switch {
	case garbage < 0:
		return true
	case garbage == 0:
		garbage = DefaultGCBytes
	}
	return size > collected+garbage
}

// keep is every commit a collection of r keeps: the heads, the heads they
// replaced, and what Retain names.
func (c *Cache) keep(ctx context.Context, key string, r *repo) ([]plumbing.Hash, error) {
	keep := slices.Concat(r.heads, r.previous)
	if c.Retain == nil {
		return keep, nil
	}
	retained, err := c.Retain(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("commits to retain: %w", err)
	}
	for _, sha := range retained {
		keep = append(keep, plumbing.NewHash(sha))
	}
	return keep, nil
}

// collect keeps what the commits keep reach (those the repository holds)
// in one new pack and removes every other pack and loose object. Readers
// go on reading meanwhile; only the removal waits for the checkouts
// under way (rw).
func (r *repo) collect(keep []plumbing.Hash) error {
	objs, shallow, err := r.reachable(keep)
	if err != nil {
		return err
	}
	packs, err := r.st.ObjectPacks()
	if err != nil {
		return fmt.Errorf("list packs of %s: %w", r.dir, err)
	}
	var loose []plumbing.Hash
	if err := r.st.ForEachObjectHash(func(h plumbing.Hash) error { loose = append(loose, h); return nil }); err != nil {
		return fmt.Errorf("list loose objects of %s: %w", r.dir, err)
	}
	var pack plumbing.Hash
	if len(objs) > 0 {
		if pack, err = r.repack(objs); err != nil {
			return err
		}
	}
	r.rw.Lock()
	defer r.rw.Unlock()
	var errs []error
	for _, p := range packs {
		if p != pack {
			errs = append(errs, r.st.DeleteOldObjectPackAndIndex(p, time.Time{}))
		}
	}
	for _, h := range loose {
		errs = append(errs, r.st.DeleteLooseObject(h))
	}
	r.st.Reindex() // go-git's index names the packs removed, not the new one
	if err := r.st.HasEncodedObject(plumbing.ZeroHash); !errors.Is(err, plumbing.ErrObjectNotFound) {
		errs = append(errs, err)
	}
	errs = append(errs, r.st.SetShallow(shallow))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove garbage of %s: %w", r.dir, err)
	}
	return nil
}

// reachable lists the objects the commits keep reach that the repository
// holds, and which of those commits miss a parent (the shallow ones).
func (r *repo) reachable(keep []plumbing.Hash) (objs, shallow []plumbing.Hash, err error) {
	seen := map[plumbing.Hash]bool{}
	var commits []*object.Commit
	for _, h := range keep {
		if seen[h] {
			continue
		}
		c, err := object.GetCommit(r.st, h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			continue // retained, but never fetched or collected before
		}
		if err != nil {
			return nil, nil, fmt.Errorf("commit %s of %s: %w", h, r.dir, err)
		}
		seen[h] = true
		commits = append(commits, c)
		if err := r.walkTree(c.TreeHash, seen); err != nil {
			return nil, nil, fmt.Errorf("tree of %s in %s: %w", h, r.dir, err)
		}
	}
	for _, c := range commits {
		for _, p := range c.ParentHashes {
			if !seen[p] {
				shallow = append(shallow, c.Hash)
				break
			}
		}
	}
	for h := range seen {
		objs = append(objs, h)
	}
	return objs, shallow, nil
}

// walkTree adds a tree and everything in it to seen, reading trees only.
func (r *repo) walkTree(h plumbing.Hash, seen map[plumbing.Hash]bool) error {
	if seen[h] {
		return nil
	}
	seen[h] = true
	t, err := object.GetTree(r.st, h)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		switch e.Mode {
		case filemode.Dir:
			if err := r.walkTree(e.Hash, seen); err != nil {
				return err
			}
		case filemode.Submodule: // a commit of another repository
		default:
			seen[e.Hash] = true
		}
	}
	return nil
}

// repack writes objs into a new pack of r (writePack), each large blob
// streamed from where it is.
func (r *repo) repack(objs []plumbing.Hash) (plumbing.Hash, error) {
	h, err := writePack(r.dir, r.st, objs)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write the pack of what %s keeps: %w", r.dir, err)
	}
	return h, nil
}

// objectsSize is what the objects of the bare repository dir weigh on
// disk.
func objectsSize(dir string) (int64, error) {
	var size int64
	err := filepath.WalkDir(filepath.Join(dir, "objects"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			size += info.Size()
		}
		return err
	})
	return size, err
}
