package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// entry is one file of an image's root filesystem.
type entry struct {
	typ      byte // tar.TypeDir, tar.TypeReg or tar.TypeSymlink
	mode     int64
	uid, gid int
	link     string // a symlink's target
	data     []byte
	// xattrs are extended attributes written as PAX records, which
	// container runtimes apply when they unpack the layer.
	xattrs map[string]string
}

// tree is a root filesystem in memory, by clean relative path
// ("usr/bin/python3.11"); the root itself is implicit.
type tree struct {
	files map[string]*entry
	// notes are the files one package replaced of another's, differing.
	notes []string
}

func newTree() *tree { return &tree{files: map[string]*entry{}} }

// aliased are the top-level directories merged /usr (Debian 12's layout)
// makes links into /usr: a package's /bin/sh is the image's /usr/bin/sh.
var aliased = map[string]bool{"bin": true, "sbin": true, "lib": true, "lib32": true, "lib64": true, "libx32": true}

// skipped are left out of every image: documentation and translations.
// Each package's copyright file stays (usr/share/doc/PKG/copyright).
var skipped = []string{"usr/share/doc", "usr/share/man", "usr/share/locale", "usr/share/info", "usr/share/lintian"}

// clean is a tar entry's name ("./usr/bin/x", "/etc/", ".") as a clean
// relative path; "" for the root.
func clean(name string) string {
	return strings.TrimPrefix(path.Clean("/"+name), "/")
}

// canonical is clean(name) on merged /usr: "./bin/sh" → "usr/bin/sh".
func canonical(name string) string {
	p := clean(name)
	if first, _, _ := strings.Cut(p, "/"); aliased[first] {
		p = "usr/" + p
	}
	return p
}

// skip reports whether the image leaves p out.
func skip(p string) bool {
	for _, s := range skipped {
		if p == s || strings.HasPrefix(p, s+"/") {
			return !(s == "usr/share/doc" && path.Base(p) == "copyright" && strings.Count(p, "/") == 4)
		}
	}
	return false
}

// relink is the target of a symlink that merged /usr moved from orig to
// moved (both clean): a relative target is made relative to the new
// place, so it names the same file. An absolute target resolves through
// the top-level links as it is.
func relink(orig, moved, target string) string {
	if path.IsAbs(target) || path.Dir(orig) == path.Dir(moved) {
		return target
	}
	abs := canonical(path.Join(path.Dir(orig), target))
	rel, err := filepath.Rel("/"+path.Dir(moved), "/"+abs)
	if err != nil {
		return "/" + abs
	}
	return filepath.ToSlash(rel)
}

// put adds e at p. A directory already there stays as the first package
// made it; a file or link replaces what was there (dpkg would refuse
// without a Replaces, which only packages outside one closure use), noted
// when it differs.
func (t *tree) put(p string, e *entry) error {
	old, ok := t.files[p]
	switch {
	case !ok:
	case old.typ == tar.TypeDir && e.typ == tar.TypeDir:
		return nil
	case old.typ == tar.TypeDir:
		for q := range t.files {
			if strings.HasPrefix(q, p+"/") {
				return fmt.Errorf("%s: a directory with files, replaced by a non-directory", p)
			}
		}
		t.notes = append(t.notes, p+": an empty directory replaced")
	case old.typ != e.typ || old.link != e.link || old.mode != e.mode || !bytes.Equal(old.data, e.data):
		t.notes = append(t.notes, p+": replaced by a different file")
	}
	t.files[p] = e
	return nil
}

// addTar adds a package's file system tree (dpkg-deb --fsys-tarfile) on
// merged /usr, leaving out what skip does.
func (t *tree) addTar(r io.Reader) error {
	tr := tar.NewReader(r)
	regular := map[string]*entry{} // for hard links, skipped ones too
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p := canonical(h.Name)
		if p == "" {
			continue
		}
		e := &entry{typ: h.Typeflag, mode: h.Mode & 0o7777, uid: h.Uid, gid: h.Gid}
		switch h.Typeflag {
		case tar.TypeDir:
		case tar.TypeReg, tar.TypeRegA:
			e.typ = tar.TypeReg
			if e.data, err = io.ReadAll(tr); err != nil {
				return fmt.Errorf("%s: %w", h.Name, err)
			}
			regular[p] = e
		case tar.TypeSymlink:
			e.link = relink(clean(h.Name), p, h.Linkname)
		case tar.TypeLink:
			// A copy: the image's entries are written in path order,
			// where the first of the two names may be the link.
			target, ok := regular[canonical(h.Linkname)]
			if !ok {
				return fmt.Errorf("%s: hard link to %s, not a file before it", h.Name, h.Linkname)
			}
			c := *target
			e = &c
			regular[p] = e
		default:
			return fmt.Errorf("%s: unsupported tar entry type %q", h.Name, h.Typeflag)
		}
		if skip(p) {
			continue
		}
		if err := t.put(p, e); err != nil {
			return err
		}
	}
}

// debTar streams file's file system tree (dpkg-deb --fsys-tarfile) to fn.
func debTar(file string, fn func(io.Reader) error) error {
	cmd := exec.Command("dpkg-deb", "--fsys-tarfile", file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	ferr := fn(out)
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("dpkg-deb --fsys-tarfile %s: %w: %s", file, err, strings.TrimSpace(stderr.String()))
	}
	if ferr != nil {
		return fmt.Errorf("%s: %w", filepath.Base(file), ferr)
	}
	return nil
}

// addParents adds the directories (0755, root's) the entries are in and
// no package lists, and checks that every parent is a directory.
func (t *tree) addParents() error {
	for p := range t.files {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			e, ok := t.files[d]
			if !ok {
				t.files[d] = &entry{typ: tar.TypeDir, mode: 0o755}
				continue
			}
			if e.typ != tar.TypeDir {
				return fmt.Errorf("%s: its parent %s is not a directory", p, d)
			}
		}
	}
	return nil
}

func (t *tree) isDir(p string) bool {
	e, ok := t.files[p]
	return ok && e.typ == tar.TypeDir
}

// writeTar writes the tree as an uncompressed tar: entries in path order
// (a directory before what it holds), every time mtime, owners numeric
// with no names, so the same tree gives the same bytes.
func (t *tree) writeTar(w io.Writer, mtime time.Time) error {
	if err := t.addParents(); err != nil {
		return err
	}
	names := make([]string, 0, len(t.files))
	for p := range t.files {
		names = append(names, p)
	}
	sort.Strings(names)
	tw := tar.NewWriter(w)
	for _, p := range names {
		e := t.files[p]
		h := &tar.Header{Name: p, Typeflag: e.typ, Mode: e.mode, Uid: e.uid, Gid: e.gid, Linkname: e.link, ModTime: mtime}
		if len(e.xattrs) > 0 {
			h.Format = tar.FormatPAX
			h.PAXRecords = map[string]string{}
			for k, v := range e.xattrs {
				h.PAXRecords["SCHILY.xattr."+k] = v
			}
		}
		switch e.typ {
		case tar.TypeDir:
			h.Name += "/"
		case tar.TypeReg:
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return tw.Close()
}
