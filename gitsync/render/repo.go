package render

import (
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxSymlinkHops bounds how many symlinks one lookup follows, as the
// kernel's ELOOP does.
const maxSymlinkHops = 40

// maxSymlinkTarget bounds the size of a symlink blob; a longer target is
// not a path.
const maxSymlinkTarget = 4096

// errNotFound is returned by stat for a path the commit does not hold.
var errNotFound = errors.New("no such file or directory in the commit")

// repo reads files of one commit by their logical path (the path kustomize
// will use, relative to the repository root, symlinks not yet followed),
// follows symlinks that stay inside the repository, and keeps what it read
// so that it can be handed to kustomize. It counts every byte it reads
// against a budget.
type repo struct {
	root   *object.Tree
	budget int64
	limit  int64
	files  map[string][]byte
	// generated holds the paths of files that are not in the commit.
	generated map[string]bool
	// decrypter decrypts SOPS-encrypted files as they are read; nil
	// refuses them. nonce marks what it decrypted (see settle).
	decrypter Decrypter
	nonce     string
}

func newRepo(root *object.Tree, limit int64) *repo {
	return &repo{root: root, budget: limit, limit: limit, files: map[string][]byte{}, generated: map[string]bool{}, nonce: newNonce()}
}

// node is what a logical path resolves to.
type node struct {
	dir   bool
	real  string // the path in the tree once symlinks are followed
	entry *object.TreeEntry
}

// stat resolves a clean, repository-relative logical path ("" is the root).
// It returns errNotFound (wrapped) when the commit does not hold it and an
// *InvalidError when a symlink on the way leaves the repository.
func (r *repo) stat(p string) (node, error) {
	return r.resolve(p, 0)
}

func (r *repo) resolve(p string, hops int) (node, error) {
	if p == "" {
		return node{dir: true}, nil
	}
	if r.generated[p] {
		return node{real: p}, nil
	}
	parts := strings.Split(p, "/")
	cur := ""
	for i, part := range parts {
		next := path.Join(cur, part)
		e, err := r.root.FindEntry(next)
		switch {
		case errors.Is(err, object.ErrEntryNotFound), errors.Is(err, object.ErrDirectoryNotFound):
			return node{}, fmt.Errorf("%s: %w", p, errNotFound)
		case err != nil:
			// go-git refuses .git-shaped and traversal-shaped names
			// before it looks at the store; no commit can hold those.
			if strings.Contains(err.Error(), "invalid path") {
				return node{}, fmt.Errorf("%s: %w", p, errNotFound)
			}
			return node{}, fmt.Errorf("look up %s: %w", next, err)
		}
		last := i == len(parts)-1
		switch e.Mode {
		case filemode.Dir:
			cur = next
		case filemode.Symlink:
			if hops >= maxSymlinkHops {
				return node{}, invalid(next, errors.New("too many levels of symbolic links"))
			}
			target, err := r.symlinkTarget(e, next)
			if err != nil {
				return node{}, err
			}
			if path.IsAbs(target) {
				return node{}, invalid(next, fmt.Errorf("symlink to %q points outside the repository", target))
			}
			t := path.Join(cur, target)
			if escapes(t) {
				return node{}, invalid(next, fmt.Errorf("symlink to %q points outside the repository", target))
			}
			if t == "." {
				t = ""
			}
			return r.resolve(path.Join(append([]string{t}, parts[i+1:]...)...), hops+1)
		case filemode.Submodule:
			return node{}, invalid(next, errors.New("git submodules are not supported; vendor the files into the repository"))
		default:
			if !last {
				return node{}, fmt.Errorf("%s: %w", p, errNotFound)
			}
			return node{real: next, entry: e}, nil
		}
	}
	return node{dir: true, real: cur}, nil
}

func (r *repo) symlinkTarget(e *object.TreeEntry, at string) (string, error) {
	f, err := r.root.TreeEntryFile(e)
	if err != nil {
		return "", fmt.Errorf("read symlink %s: %w", at, err)
	}
	if f.Size > maxSymlinkTarget {
		return "", invalid(at, fmt.Errorf("symlink target is %d bytes long", f.Size))
	}
	target, err := f.Contents()
	if err != nil {
		return "", fmt.Errorf("read symlink %s: %w", at, err)
	}
	return target, nil
}

// read returns the content of the file at logical path p, reading it from
// the commit at most once, and records it for kustomize.
func (r *repo) read(p string) ([]byte, error) {
	if data, ok := r.files[p]; ok {
		return data, nil
	}
	n, err := r.stat(p)
	if err != nil {
		return nil, err
	}
	if n.dir {
		return nil, invalid(p, errors.New("is a directory, not a file"))
	}
	f, err := r.root.TreeEntryFile(n.entry)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", n.real, err)
	}
	if f.Size > r.budget {
		return nil, invalid(p, fmt.Errorf("the files rendering reads from the commit add up to more than %d bytes", r.limit))
	}
	rc, err := f.Reader()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", n.real, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, f.Size))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", n.real, err)
	}
	r.budget -= int64(len(data))
	if data, err = r.decrypt(p, data); err != nil {
		return nil, err
	}
	r.files[p] = data
	return data, nil
}

// add records a file that is not in the commit (a generated kustomization).
func (r *repo) add(p string, data []byte) {
	r.files[p] = data
	r.generated[p] = true
}

// entries lists the names in the directory at logical path dir.
func (r *repo) entries(dir string) ([]object.TreeEntry, error) {
	n, err := r.stat(dir)
	if err != nil {
		return nil, err
	}
	t := r.root
	if n.real != "" {
		if t, err = r.root.Tree(n.real); err != nil {
			return nil, fmt.Errorf("read directory %s: %w", n.real, err)
		}
	}
	return t.Entries, nil
}

// join resolves ref against the directory dir the way kustomize does and
// refuses what would leave the repository.
func join(dir, ref string) (string, error) {
	if path.IsAbs(ref) {
		return "", errors.New("absolute paths are not allowed; use a path relative to the kustomization")
	}
	p := path.Join(dir, ref)
	if escapes(p) {
		return "", errors.New("path leads outside the repository")
	}
	if p == "." {
		p = ""
	}
	return p, nil
}

func escapes(clean string) bool { return clean == ".." || strings.HasPrefix(clean, "../") }
