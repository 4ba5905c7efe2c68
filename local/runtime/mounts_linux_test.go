package runtime

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
)

// runInPlan runs a shell script the way startProcess forks a container:
// from a locked thread that entered the plan.
func runInPlan(plan *mountPlan, script string) (string, error) {
	cmd := exec.Command("/bin/sh", "-c", script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		stuck, err := plan.enter()
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
	if err := mountSupport(); err != nil {
		// Not root on Linux: replicas that mount volumes are refused with
		// this reason (volumeSupport), never run without them.
		if os.Geteuid() == 0 || !errors.Is(err, errMountsUnsupported) {
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

	plan := &mountPlan{scratch: filepath.Join(vols, "..mounts"), mounts: []bindMount{
		{volume: "b", source: filepath.Join(vols, "b"), target: top + "/a/b/c"}, // inside a's path
		{volume: "a", source: filepath.Join(vols, "a"), target: top + "/a", readOnly: true},
		{volume: "c", source: filepath.Join(vols, "c", "token"), target: top + "/sa/token"}, // a subPath file
		{volume: "d", source: filepath.Join(vols, "b"), target: existing},
		{volume: "e", source: filepath.Join(vols, "b"), target: top + "-too/does/not/matter"}, // a second under /: on the same mirror
	}}
	sortMounts(plan.mounts)
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
	if stages, _ := filepath.Glob(filepath.Join(plan.scratch, "*")); len(stages) != 2 {
		t.Errorf("mirrors staged: %v, want two (/ once, and a's volume)", stages)
	}
	if b, err := os.ReadFile(filepath.Join(existing, "hidden")); err != nil || string(b) != "host" {
		t.Errorf("what the mount covered changed: %q %v", b, err)
	}

	// A directory cannot cover a file, as in runc.
	plan = &mountPlan{scratch: plan.scratch, mounts: []bindMount{{volume: "a", source: filepath.Join(vols, "a"), target: filepath.Join(existing, "hidden")}}}
	if _, err := runInPlan(plan, "true"); err == nil || !strings.Contains(err.Error(), `volume "a" at `+existing+"/hidden: cannot mount a directory over a file") {
		t.Errorf("a directory over a file: %v", err)
	}
}

// BenchmarkMountPlanEnter is what a container that mounts one volume at a
// path missing under / pays at each start: a mount namespace, a tmpfs
// mirror of / and the bind, on a thread that then ends.
func BenchmarkMountPlanEnter(b *testing.B) {
	if err := mountSupport(); err != nil {
		b.Fatal(err)
	}
	vols := b.TempDir()
	if err := os.Mkdir(filepath.Join(vols, "v"), 0o755); err != nil {
		b.Fatal(err)
	}
	plan := &mountPlan{scratch: filepath.Join(vols, "..mounts"), mounts: []bindMount{
		{volume: "v", source: filepath.Join(vols, "v"), target: "/knit-mount-bench/v", readOnly: true},
	}}
	benchEnter(b, plan)
}

// benchEnter measures plan.enter on a thread of its own each time, as a
// container's start does (the thread ends with its goroutine).
func benchEnter(b *testing.B, plan *mountPlan) {
	for b.Loop() {
		done := make(chan error, 1)
		go func() {
			goruntime.LockOSThread() // never unlocked: the thread ends with the goroutine
			_, err := plan.enter()
			done <- err
		}()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}
