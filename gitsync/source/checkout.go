package source

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Checkout writes the files of commit sha of the repository named key to
// <root>/<sha> and returns that directory. A directory already there is
// reused: a commit's content never changes. The files appear at once,
// through a rename, so a concurrent build never sees half a tree. Large
// files are copied from the cache repository as they are read, never
// held in memory whole; a collection of the repository waits until the
// checkout is done.
func (c *Cache) Checkout(key, sha, root string) (string, error) {
	dir := filepath.Join(root, sha)
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return dir, nil
	}
	r, err := c.open(key)
	if err != nil {
		return "", err
	}
	r.rw.RLock()
	defer r.rw.RUnlock()
	commit, err := r.commit(key, sha)
	if err != nil {
		return "", err
	}
	tree, err := commit.Tree()
	if err != nil {
		return "", fmt.Errorf("tree of %s: %w", sha, err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, ".checkout-"+sha[:7]+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // after a successful rename there is nothing left
	if err := writeTree(tree, tmp); err != nil {
		return "", fmt.Errorf("check out %s: %w", sha, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if fi, statErr := os.Stat(dir); statErr == nil && fi.IsDir() {
			return dir, nil // a concurrent checkout won
		}
		return "", err
	}
	return dir, nil
}

// Export writes the files under dir (a slash path, "." for the root) of
// commit sha of the repository named key into dst, which must be empty or
// missing: a build's context, without the rest of the repository, its
// history or anything a checkout keeps. Symbolic links and submodules are
// left out, as Checkout leaves them.
func (c *Cache) Export(key, sha, dir, dst string) error {
	r, err := c.open(key)
	if err != nil {
		return err
	}
	r.rw.RLock()
	defer r.rw.RUnlock()
	commit, err := r.commit(key, sha)
	if err != nil {
		return err
	}
	tree, err := commit.Tree()
	if err != nil {
		return fmt.Errorf("tree of %s: %w", sha, err)
	}
	if dir != "." {
		if !safePath(dir) {
			return fmt.Errorf("path %q leaves the repository", dir)
		}
		if tree, err = tree.Tree(dir); err != nil {
			return fmt.Errorf("directory %s of %.7s: %w", dir, sha, err)
		}
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := writeTree(tree, dst); err != nil {
		return fmt.Errorf("export %s of %.7s: %w", dir, sha, err)
	}
	return nil
}

func writeTree(tree *object.Tree, dir string) error {
	return tree.Files().ForEach(func(f *object.File) error {
		if !safePath(f.Name) {
			return fmt.Errorf("path %q leaves the repository", f.Name)
		}
		path := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		switch f.Mode {
		case filemode.Symlink:
			return nil // a link could point anywhere on this machine; builds do without
		case filemode.Submodule:
			return nil
		}
		mode := os.FileMode(0o644)
		if f.Mode == filemode.Executable {
			mode = 0o755
		}
		return writeBlob(f, path, mode)
	})
}

func writeBlob(f *object.File, path string, mode os.FileMode) error {
	r, err := f.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, r)
	return errors.Join(err, out.Close())
}

// safePath refuses names that would escape the checkout directory.
func safePath(name string) bool {
	if name == "" || filepath.IsAbs(name) || strings.HasPrefix(name, "/") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." || part == ".git" {
			return false
		}
	}
	return true
}
