package pack

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// entry is one path of the layer. Regular files carry their content.
type entry struct {
	typ      byte // tar.TypeReg, tar.TypeDir or tar.TypeSymlink
	mode     int64
	uid, gid int
	data     []byte
	link     string // a symlink's target
	src      string // where it came from, for error messages
}

// tree is the layer's file system before it is written, keyed by the path
// without its leading slash.
type tree struct {
	mtime   time.Time
	entries map[string]*entry
}

func newTree(mtime time.Time) *tree {
	return &tree{mtime: mtime, entries: map[string]*entry{}}
}

// addBase adds what every image has: the root and nonroot users and
// groups, nonroot's home, an empty world-writable /tmp and the CA bundle.
func (t *tree) addBase(caBundle string) error {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:/home/%s:/sbin/nologin\n",
		NonRootName, NonRootUID, NonRootUID, NonRootName, NonRootName)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", NonRootName, NonRootUID)
	for _, e := range []struct {
		path string
		e    *entry
	}{
		{"/etc/passwd", &entry{typ: tar.TypeReg, mode: 0o644, data: []byte(passwd), src: "generated"}},
		{"/etc/group", &entry{typ: tar.TypeReg, mode: 0o644, data: []byte(group), src: "generated"}},
		{"/tmp", &entry{typ: tar.TypeDir, mode: 0o1777, src: "generated"}},
		{"/home/" + NonRootName, &entry{typ: tar.TypeDir, mode: 0o700, uid: NonRootUID, gid: NonRootUID, src: "generated"}},
	} {
		if err := t.put(e.path, e.e); err != nil {
			return err
		}
	}
	if caBundle == "" {
		return nil
	}
	return t.addFile(File{Src: caBundle, Dest: CABundlePath})
}

// addFile copies f in: a file (following symlinks, with its shared
// libraries if it is a dynamically linked program) or a directory tree.
func (t *tree) addFile(f File) error {
	if !path.IsAbs(f.Dest) {
		return fmt.Errorf("%s: destination %q is not absolute", f.Src, f.Dest)
	}
	info, err := os.Stat(f.Src)
	if err != nil {
		return fmt.Errorf("add %s: %w", f.Src, err)
	}
	if info.IsDir() {
		return t.addDir(f)
	}
	if err := t.addRegular(f.Src, f.Dest, info); err != nil {
		return err
	}
	libs, err := Closure(f.Src)
	if err != nil {
		return err
	}
	for _, lib := range libs {
		info, err := os.Stat(lib)
		if err != nil {
			return fmt.Errorf("add %s (needed by %s): %w", lib, f.Src, err)
		}
		if err := t.addRegular(lib, lib, info); err != nil {
			return err
		}
	}
	return nil
}

// addDir copies the tree under f.Src to f.Dest.
func (t *tree) addDir(f File) error {
	return filepath.WalkDir(f.Src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("add %s: %w", f.Src, err)
		}
		rel, err := filepath.Rel(f.Src, p)
		if err != nil {
			return fmt.Errorf("add %s: %w", p, err)
		}
		dest := path.Join(f.Dest, filepath.ToSlash(rel))
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("add %s: %w", p, err)
		}
		switch {
		case d.IsDir():
			return t.put(dest, &entry{typ: tar.TypeDir, mode: int64(info.Mode().Perm()), src: p})
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return fmt.Errorf("add %s: %w", p, err)
			}
			return t.put(dest, &entry{typ: tar.TypeSymlink, mode: 0o777, link: target, src: p})
		case d.Type().IsRegular():
			return t.addRegular(p, dest, info)
		default:
			return fmt.Errorf("add %s: unsupported file type %s", p, d.Type())
		}
	})
}

// addRegular adds the content of the regular file src at dest, keeping its
// permission bits (not setuid, setgid or sticky).
func (t *tree) addRegular(src, dest string, info fs.FileInfo) error {
	if !info.Mode().IsRegular() {
		return fmt.Errorf("add %s: not a regular file or directory", src)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("add %s: %w", src, err)
	}
	return t.put(dest, &entry{typ: tar.TypeReg, mode: int64(info.Mode().Perm()), data: data, src: src})
}

// put records e at p and its parent directories. The same path twice is
// fine when both are the same directory or hold the same content (a
// library several programs need); anything else is a conflict.
func (t *tree) put(p string, e *entry) error {
	name := strings.TrimPrefix(path.Clean(p), "/")
	if name == "" || name == "." {
		return nil // the root itself
	}
	if old, ok := t.entries[name]; ok {
		if same(old, e) {
			return nil
		}
		return fmt.Errorf("/%s: %s conflicts with %s", name, e.src, old.src)
	}
	if dir := path.Dir(name); dir != "." {
		if old, ok := t.entries[dir]; ok && old.typ != tar.TypeDir {
			return fmt.Errorf("/%s: parent of %s is not a directory", dir, e.src)
		}
		if _, ok := t.entries[dir]; !ok {
			if err := t.put(dir, &entry{typ: tar.TypeDir, mode: 0o755, src: "parent of " + e.src}); err != nil {
				return err
			}
		}
	}
	t.entries[name] = e
	return nil
}

func same(a, b *entry) bool {
	if a.typ != b.typ || a.link != b.link {
		return false
	}
	if a.typ == tar.TypeDir {
		return true
	}
	return a.mode == b.mode && a.uid == b.uid && a.gid == b.gid && bytes.Equal(a.data, b.data)
}

// tar writes the entries in path order, parents before children, all with
// the tree's mtime; a regular file whose content and mode equal an earlier
// one's becomes a hard link to it.
func (t *tree) tar() ([]byte, error) {
	names := make([]string, 0, len(t.entries))
	for n := range t.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	type content struct {
		sum      [sha256.Size]byte
		mode     int64
		uid, gid int
	}
	seen := map[content]string{}
	for _, n := range names {
		e := t.entries[n]
		h := &tar.Header{
			Typeflag: e.typ,
			Name:     n,
			Mode:     e.mode,
			Uid:      e.uid,
			Gid:      e.gid,
			ModTime:  t.mtime,
		}
		switch e.typ {
		case tar.TypeDir:
			h.Name += "/"
		case tar.TypeSymlink:
			h.Linkname = e.link
		case tar.TypeReg:
			key := content{sha256.Sum256(e.data), e.mode, e.uid, e.gid}
			if first, ok := seen[key]; ok {
				h.Typeflag, h.Linkname = tar.TypeLink, first
			} else {
				seen[key] = n
				h.Size = int64(len(e.data))
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("tar /%s: %w", n, err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(e.data); err != nil {
				return nil, fmt.Errorf("tar /%s: %w", n, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("tar: %w", err)
	}
	return buf.Bytes(), nil
}
