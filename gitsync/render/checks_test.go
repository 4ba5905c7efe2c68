package render

import (
	"errors"
	"strings"
	"testing"
)

func TestIsRemote(t *testing.T) {
	for ref, want := range map[string]bool{
		"github.com/org/repo//base?ref=v1":          true,
		"GitHub.com/org/repo":                       true,
		"github.com:org/repo":                       true,
		"git::https://example.com/org/repo.git":     true,
		"https://example.com/service.yaml":          true,
		"http://127.0.0.1/x.yaml":                   true,
		"ssh://git@example.com/org/repo.git":        true,
		"file:///srv/repo":                          true,
		"git@gitlab.com:org/repo.git//base":         true,
		"org-bot@example.com:org/repo":              true,
		"base":                                      false,
		"../base":                                   false,
		"./service.yaml":                            false,
		"overlays/github.com/x":                     false,
		"gitlab.com/org/repo/base":                  false, // not fetched by kustomize: a local path (not found)
		"config/app.properties":                     false,
		"team=@config/weird":                        false,
		"https-redirect/kustomization-dir":          false,
		"  https://example.com/leading-space.yaml ": true,
	} {
		if got := isRemote(ref); got != want {
			t.Errorf("isRemote(%q) = %t, want %t", ref, got, want)
		}
	}
}

func TestMaxBytes(t *testing.T) {
	tree := commitTree(t, map[string]string{
		"kustomization.yaml": "resources:\n  - big.yaml\n",
		"big.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  a: " + strings.Repeat("x", 4096) + "\n",
		"src/huge.bin":       strings.Repeat("\x00", 1<<20), // never read: nothing names it
	}, nil)
	_, err := Options{MaxBytes: 1024}.Render(tree, "")
	var ie *InvalidError
	if !errors.As(err, &ie) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want an *InvalidError", err)
	}
	if ie.File != "big.yaml" || !strings.Contains(err.Error(), "more than 1024 bytes") {
		t.Errorf("err = %v (file %q), want big.yaml over 1024 bytes", err, ie.File)
	}
	objs, err := Options{MaxBytes: 8192}.Render(tree, ".")
	if err != nil || len(objs) != 1 {
		t.Fatalf("Render with room for the manifests (the 1 MiB source file is not read): %d objects, %v", len(objs), err)
	}
}

func TestDirSpellings(t *testing.T) {
	tree := commitTree(t, map[string]string{
		"deploy/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
	}, nil)
	for _, dir := range []string{"deploy", "./deploy", "deploy/", "deploy/../deploy"} {
		objs, err := Render(tree, dir)
		if err != nil || len(objs) != 1 || objs[0].GetName() != "a" {
			t.Errorf("Render(%q) = %d objects, %v", dir, len(objs), err)
		}
	}
	for dir, want := range map[string]string{
		"../deploy":      "leads outside the repository",
		"/deploy":        "absolute paths are not allowed",
		"deploy/cm.yaml": "not a directory",
		"nope":           "no such directory",
	} {
		_, err := Render(tree, dir)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("Render(%q) error = %v, want ErrInvalid containing %q", dir, err, want)
		}
	}
}

func TestSymlinkLoop(t *testing.T) {
	tree := commitTree(t, map[string]string{
		"kustomization.yaml": "resources:\n  - a.yaml\n",
	}, map[string]string{"a.yaml": "b.yaml", "b.yaml": "a.yaml"})
	_, err := Render(tree, "")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "too many levels of symbolic links") {
		t.Fatalf("err = %v, want a symlink loop", err)
	}
}

func TestDirectorySymlinkCycle(t *testing.T) {
	// loop -> . makes loop/loop/loop/… all the root: nesting is bounded.
	tree := commitTree(t, map[string]string{
		"kustomization.yaml": "resources:\n  - loop\n",
	}, map[string]string{"loop": "."})
	_, err := Render(tree, "")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "too many levels of symbolic links") {
		t.Fatalf("err = %v, want a symlink loop", err)
	}
}

func TestInternalErrors(t *testing.T) {
	if _, err := Render(nil, ""); err == nil || errors.Is(err, ErrInvalid) {
		t.Errorf("nil tree: err = %v, want an internal error", err)
	}
	opts := Options{MaxBytes: -1}
	if err := opts.Validate(); err == nil {
		t.Error("Validate accepted a negative MaxBytes")
	}
}

func TestDeterministic(t *testing.T) {
	files := map[string]string{"all.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: z}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: z}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: a, namespace: a}
---
apiVersion: v1
kind: Namespace
metadata: {name: z}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: a}
`}
	tree := commitTree(t, files, nil)
	objs, err := Render(tree, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
	}
	want := "Namespace//z CustomResourceDefinition//things.example.com ConfigMap/a/c ConfigMap/z/a ConfigMap/z/b Deployment/a/a"
	if strings.Join(got, " ") != want {
		t.Errorf("order = %s\nwant    %s", strings.Join(got, " "), want)
	}
}
