package view

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/knitops/knit/local/engine"
)

// runInPlan runs a shell script the way the runtime's startProcess
// forks a container: from a locked thread that entered the plan.
func runInPlan(plan *Plan, script string) (string, error) {
	cmd := exec.Command("/bin/sh", "-c", script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		stuck, err := plan.Enter()
		if err == nil {
			err = cmd.Run()
		}
		if !stuck {
			goruntime.UnlockOSThread()
		}
		done <- err
	}()
	err := <-done
	return out.String(), err
}

// A container's view has its volumes at their paths, nested ones too,
// read-only where asked, over what was there; nothing of it reaches this
// machine's own view, nor the volumes' own directories.
func TestMountPlanEnter(t *testing.T) {
	if err := Supported(); err != nil {
		// Not root on Linux: replicas that mount volumes are refused with
		// this reason (volumeSupport), never run without them.
		if os.Geteuid() == 0 || !errors.Is(err, ErrUnsupported) {
			t.Fatalf("mount namespaces: %v", err)
		}
		return
	}
	vols := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(vols, "a", "f"), "outer")
	write(filepath.Join(vols, "b", "g"), "inner")
	write(filepath.Join(vols, "c", "token"), "jwt")
	existing := t.TempDir() // a mount path that exists: what it holds is hidden
	write(filepath.Join(existing, "hidden"), "host")
	top := "/knit-mount-test-" + filepath.Base(vols)

	plan := &Plan{Scratch: filepath.Join(vols, "..Mounts"), Mounts: []Mount{
		{Volume: "b", Source: filepath.Join(vols, "b"), Target: top + "/a/b/c"}, // inside a's path
		{Volume: "a", Source: filepath.Join(vols, "a"), Target: top + "/a", ReadOnly: true},
		{Volume: "c", Source: filepath.Join(vols, "c", "token"), Target: top + "/sa/token"}, // a subPath file
		{Volume: "d", Source: filepath.Join(vols, "b"), Target: existing},
		{Volume: "e", Source: filepath.Join(vols, "b"), Target: top + "-too/does/not/matter"}, // a second under /: on the same mirror
	}}
	SortMounts(plan.Mounts)
	out, err := runInPlan(plan, strings.Join([]string{
		"cat " + top + "/a/f " + top + "/a/b/c/g " + top + "/sa/token " + existing + "/g " + top + "-too/does/not/matter/g",
		"test ! -e " + existing + "/hidden",
		"if touch " + top + "/a/new 2>/dev/null; then echo a is writable; fi",
		"touch " + top + "/a/b/c/written",
	}, " && "))
	if err != nil || out != "outerinnerjwtinnerinner" {
		t.Errorf("in the container: %q %v, want outerinnerjwtinnerinner", out, err)
	}
	if _, err := os.Stat(filepath.Join(vols, "b", "written")); err != nil {
		t.Errorf("a write to a writable volume did not reach it: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(vols, "a", "b")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the mount point inside volume a was made in the volume itself (%v)", err)
	}
	for _, p := range []string{top, top + "-too"} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists on this machine (%v)", p, err)
		}
	}
	if stages, _ := filepath.Glob(filepath.Join(plan.Scratch, "*")); len(stages) != 2 {
		t.Errorf("mirrors staged: %v, want two (/ once, and a's volume)", stages)
	}
	if b, err := os.ReadFile(filepath.Join(existing, "hidden")); err != nil || string(b) != "host" {
		t.Errorf("what the mount covered changed: %q %v", b, err)
	}

	// A directory cannot cover a file, as in runc.
	plan = &Plan{Scratch: plan.Scratch, Mounts: []Mount{{Volume: "a", Source: filepath.Join(vols, "a"), Target: filepath.Join(existing, "hidden")}}}
	if _, err := runInPlan(plan, "true"); err == nil || !strings.Contains(err.Error(), `volume "a" at `+existing+"/hidden: cannot mount a directory over a file") {
		t.Errorf("a directory over a file: %v", err)
	}
}

// BenchmarkMountPlanEnter is what a container that mounts one volume at a
// path missing under / pays at each start: a mount namespace, a tmpfs
// mirror of / and the bind, on a thread that then ends.
func BenchmarkMountPlanEnter(b *testing.B) {
	if err := Supported(); err != nil {
		b.Fatal(err)
	}
	vols := b.TempDir()
	if err := os.Mkdir(filepath.Join(vols, "v"), 0o755); err != nil {
		b.Fatal(err)
	}
	plan := &Plan{Scratch: filepath.Join(vols, "..Mounts"), Mounts: []Mount{
		{Volume: "v", Source: filepath.Join(vols, "v"), Target: "/knit-mount-bench/v", ReadOnly: true},
	}}
	benchEnter(b, plan)
}

// benchEnter measures plan.Enter on a thread of its own each time, as a
// container's start does (the thread ends with its goroutine).
func benchEnter(b *testing.B, plan *Plan) {
	for b.Loop() {
		done := make(chan error, 1)
		go func() {
			goruntime.LockOSThread() // never unlocked: the thread ends with the goroutine
			_, err := plan.Enter()
			done <- err
		}()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkContainerView is what every container pays at each start
// where it gets a view of its own (root on Linux) and mounts nothing: a
// mount and a UTS namespace, the hostname, /dev and /proc's read-only
// parts, on a thread that then ends.
func BenchmarkContainerView(b *testing.B) {
	if err := Supported(); err != nil {
		b.Fatal(err)
	}
	plan := &Plan{Scratch: filepath.Join(b.TempDir(), "..mounts"), System: true, Hostname: "bench"}
	benchEnter(b, plan)
}

// BenchmarkConfinedKoView is what a ko:// container running as ko's
// nonroot user pays at each start beyond BenchmarkContainerView: its
// binary, out of that user's reach, bound at /ko-app (a mirror of /),
// the state dir covered with its builds bound back, and its limits.
func BenchmarkConfinedKoView(b *testing.B) {
	if err := Supported(); err != nil {
		b.Fatal(err)
	}
	state := b.TempDir()
	builds := filepath.Join(state, "builds")
	if err := os.MkdirAll(builds, 0o755); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(builds, "app")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	// What the runtime's processPrivileges gives a container without a
	// securityContext: containerd's default capabilities, no_new_privs.
	names, err := engine.Capabilities(engine.Config{})
	if err != nil {
		b.Fatal(err)
	}
	limits := &Privileges{Capabilities: engine.CapabilityNumbers(names), NoNewPrivs: true}
	for _, tc := range []struct {
		name string
		plan *Plan
	}{
		{"cover and limits", &Plan{Scratch: filepath.Join(state, "..mounts"), System: true, Hostname: "bench",
			Hide: state, Show: []string{builds}, Limits: limits}},
		{"binary at /ko-app", &Plan{Scratch: filepath.Join(b.TempDir(), "..mounts"), System: true, Hostname: "bench",
			Mounts: []Mount{{Volume: "image binary", Source: bin, Target: "/ko-app/app", ReadOnly: true}}}},
	} {
		b.Run(tc.name, func(b *testing.B) { benchEnter(b, tc.plan) })
	}
}
