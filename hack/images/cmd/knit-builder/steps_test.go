package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The build Job runs each step in a container of its own, sharing only
// the workspace: fetch, then compile, then push.
func TestStepsOneAtATime(t *testing.T) {
	src, sha := repo(t, "hello, step by step")
	o := testOptions(t, src, sha, newRegistry(t))
	var log strings.Builder
	var got result
	for _, step := range []string{stepFetch, stepCompile, stepPush} {
		s := o
		s.step = step
		if step != stepFetch {
			s.source, s.commit = "", ""
		}
		if step != stepCompile {
			s.pkg = ""
		}
		res := build(context.Background(), s, &log)
		if res.Error != "" {
			t.Fatalf("step %s: %s\n%s", step, res.Error, log.String())
		}
		if step != stepPush && res.Image != "" {
			t.Errorf("step %s reported an image", step)
		}
		got = res
	}
	if !strings.Contains(got.Image, "/default/shop/hello@sha256:") || got.Push == "" {
		t.Errorf("push step result = %+v, want the image by digest", got)
	}
}

// A package that looks like a flag is refused before go runs, and go
// build is given "--" anyway: -toolexec never runs a command.
func TestCompileNeverReadsThePackageAsAFlag(t *testing.T) {
	src, sha := repo(t, "x")
	// A main package at the root: what go builds when it is given no
	// package but a flag.
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	marker, tool := filepath.Join(dir, "pwned"), filepath.Join(dir, "tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\ntouch "+marker+"\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	evil := "-toolexec=" + tool
	o := testOptions(t, src, sha, newRegistry(t))
	o.pkg = evil
	var log strings.Builder
	res := build(context.Background(), o, &log)
	if !strings.Contains(res.Error, "not a package path") || res.Fetch != "" {
		t.Errorf("build of %q = %+v, want refused before fetching", evil, res)
	}
	// The same past the check: go reads it as an import path.
	if err := compile(context.Background(), o, src, filepath.Join(t.TempDir(), "bin"), &log); err == nil {
		t.Error("go build of a flag-like package succeeded")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the package path ran -toolexec")
	}
	args := compileArgs("bin", "./cmd/hello")
	if i := slices.Index(args, "--"); i < 0 || args[len(args)-1] != "./cmd/hello" || i != len(args)-2 {
		t.Errorf("go build args %v: want -- right before the package", args)
	}
}

func TestCheckPackage(t *testing.T) {
	for pkg, ok := range map[string]bool{
		"./cmd/hello": true, ".": true, "./": true, "example.com/tool/v2": true, "shop/cmd/x": true,
		"-toolexec=x": false, "./-x": false, "../x": false, "./a/../b": false, "./...": false, "all": false,
		"./cmd/hello/": false, "a b": false, "x@latest": false, "./.git": false, "": false, "/etc": false,
	} {
		if err := checkPackage(pkg); (err == nil) != ok {
			t.Errorf("checkPackage(%q) = %v, want ok=%v", pkg, err, ok)
		}
	}
}

// The push step holds the registry's credentials and reads a workspace
// the user's build wrote: a symlink there must not make it pack another
// of its files into the image.
func TestPushReadsOnlyARegularBinary(t *testing.T) {
	o := testOptions(t, "", "", newRegistry(t))
	o.step, o.pkg, o.source, o.commit = stepPush, "", "", ""
	secret := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(secret, []byte(`{"auths":{"r":{"auth":"c2VjcmV0"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, plant := range map[string]func(out string) error{
		"a symlink to a file":   func(out string) error { return os.Symlink(secret, filepath.Join(out, "app")) },
		"a symlinked directory": func(out string) error { return os.Symlink(filepath.Dir(secret), out) },
		"a directory":           func(out string) error { return os.Mkdir(filepath.Join(out, "app"), 0o755) },
	} {
		t.Run(name, func(t *testing.T) {
			s := o
			s.workspace = t.TempDir()
			out := filepath.Join(s.workspace, "out")
			if name == "a symlinked directory" {
				if err := os.Rename(secret, filepath.Join(filepath.Dir(secret), "app")); err != nil {
					t.Fatal(err)
				}
				defer os.Rename(filepath.Join(filepath.Dir(secret), "app"), secret)
			} else if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := plant(out); err != nil {
				t.Fatal(err)
			}
			var log strings.Builder
			res := build(context.Background(), s, &log)
			if res.Image != "" || res.Error == "" {
				t.Errorf("push of %s = %+v, want an error and nothing pushed", name, res)
			}
		})
	}
}
