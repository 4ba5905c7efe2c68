package render

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// FuzzRender renders any commit: the input is a fixture as in testdata
// (files, symlinks, the directory to render), turned into a tree in
// memory. Whatever a commit holds — broken YAML, kustomizations that
// refer to each other, symlink loops, paths that climb out — Render
// returns objects or an error that matches ErrInvalid, so the reconciler
// reports the commit instead of retrying it forever, and never panics.
// MaxBytes keeps the work bounded.
func FuzzRender(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no fixtures: %v", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("-- kustomization.yaml --\nresources: [a]\n-- a/kustomization.yaml --\nresources: [../a]\n")
	f.Add("-- loop -> loop --\n-- kustomization.yaml --\nresources: [loop/x.yaml]\n")
	f.Add("-- up -> .. --\n-- kustomization.yaml --\nresources: [up/up/etc/passwd]\n")
	f.Add("-- svc.yaml --\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n- 1\n")
	f.Add("-- kustomization.yaml --\nconfigMapGenerator:\n- name: c\n  files: [k=kustomization.yaml]\n  envs: [.env]\n-- .env --\nA=1\n")
	f.Fuzz(func(t *testing.T, fixtureText string) {
		fx := parseFixture(t, fixtureText)
		tree := memTree(t, fx.files, fx.symlinks)
		objs, err := Options{MaxBytes: 1 << 20}.Render(tree, fx.dir)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Render: %v: an error a commit causes must match ErrInvalid", err)
			}
			return
		}
		for _, o := range objs {
			if o.GetKind() == "" || o.GetAPIVersion() == "" {
				t.Fatalf("rendered an object without kind or apiVersion: %v", o.Object)
			}
		}
	})
}

// memTree stores files and symlinks as a commit's tree in memory, as git
// would: paths with empty, "." or ".." parts, or that are both a file and
// a directory, cannot be committed and are left out.
func memTree(t *testing.T, files, symlinks map[string]string) *object.Tree {
	t.Helper()
	all := map[string]entry{}
	for p, body := range files {
		all[p] = entry{filemode.Regular, body}
	}
	for p, target := range symlinks {
		all[p] = entry{filemode.Symlink, target}
	}
	names := make([]string, 0, len(all))
	for p := range all {
		names = append(names, p)
	}
	sort.Strings(names)
	root := &dirNode{children: map[string]*dirNode{}, files: map[string]entry{}}
	for _, p := range names {
		parts := strings.Split(p, "/")
		if !committable(parts) {
			continue
		}
		d, ok := root, true
		for _, part := range parts[:len(parts)-1] {
			if _, isFile := d.files[part]; isFile {
				ok = false
				break
			}
			if d.children[part] == nil {
				d.children[part] = &dirNode{children: map[string]*dirNode{}, files: map[string]entry{}}
			}
			d = d.children[part]
		}
		last := parts[len(parts)-1]
		if !ok || d.children[last] != nil {
			continue
		}
		d.files[last] = all[p]
	}
	s := memory.NewStorage()
	var store func(d *dirNode) plumbing.Hash
	store = func(d *dirNode) plumbing.Hash {
		var tr object.Tree
		for name, e := range d.files {
			obj := s.NewEncodedObject()
			obj.SetType(plumbing.BlobObject)
			w, err := obj.Writer()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
			w.Close()
			h, err := s.SetEncodedObject(obj)
			if err != nil {
				t.Fatal(err)
			}
			tr.Entries = append(tr.Entries, object.TreeEntry{Name: name, Mode: e.mode, Hash: h})
		}
		for name, child := range d.children {
			tr.Entries = append(tr.Entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: store(child)})
		}
		sort.Slice(tr.Entries, func(i, j int) bool { return gitOrder(tr.Entries[i]) < gitOrder(tr.Entries[j]) })
		obj := s.NewEncodedObject()
		if err := tr.Encode(obj); err != nil {
			t.Fatal(err)
		}
		h, err := s.SetEncodedObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tree, err := object.GetTree(s, store(root))
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// dirNode is a directory of memTree's, entry one of its files.
type dirNode struct {
	children map[string]*dirNode
	files    map[string]entry
}

type entry struct {
	mode filemode.FileMode
	body string
}

// gitOrder sorts tree entries as git does: a directory as if its name
// ended in a slash.
func gitOrder(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

func committable(parts []string) bool {
	for _, part := range parts {
		if part == "" || part == "." || part == ".." || part == ".git" || strings.ContainsRune(part, 0) || path.Clean(part) != part {
			return false
		}
	}
	return true
}
