//go:build !race

// The race detector's shadow memory makes heap readings meaningless and
// slows go-git's pack indexing of the 64 MiB pushes below by an order of
// magnitude; make test runs this file in its plain pass.

package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/knitops/knit/gitsync/render"
)

// What knit does with a pushed commit — fetch it, render it, check it out
// for a build, collect the cache — holds no large file in memory once it
// is done: pushes of a 64 MiB file leave the heap where it was. (While a
// fetch runs, go-git's pack indexer holds the largest object once; that
// peak is reported, not asserted.) Render never reads a large file: a
// YAML file over its budget is refused by its size.
func TestBigPushesLeaveTheHeapFlat(t *testing.T) {
	const blob, rounds = 64 << 20, 2
	dir, git := gitRepo(t)
	writeFile(t, dir, "service.yaml", service)
	git("add", ".")
	git("commit", "-qm", "first")
	srv := serveRepo(t, dir)
	c := &Cache{Dir: t.TempDir(), Egress: srv.Policy, GCBytes: -1}
	ctx := context.Background()
	if _, err := c.Fetch(ctx, "default/app", srv.URL, []string{"main"}, nil); err != nil {
		t.Fatal(err)
	}
	base := heapInUse()
	t.Logf("before: heap in use %s, %s", mib(base), rss())
	for i := range rounds {
		randomFile(t, dir, "model.bin", blob, uint64(i))
		git("add", ".")
		git("commit", "-qm", fmt.Sprintf("model %d", i))
		peak := watchHeap()
		sha := pushed(t, c, srv)
		out, err := c.Checkout("default/app", sha, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(filepath.Join(out, "model.bin")); err != nil || fi.Size() != blob {
			t.Fatalf("checked out model.bin: %v, %v", fi, err)
		}
		top := peak()
		after := heapInUse()
		t.Logf("push %d of a %s file: heap peak %s, in use after %s; %s; cache %s", i, mib(blob), mib(top), mib(after), rss(), mib(uint64(cacheSize(t, c, "default/app"))))
		if grew := int64(after) - int64(base); grew > blob/4 {
			t.Errorf("push %d of a %s file left the heap %s larger", i, mib(blob), mib(uint64(grew)))
		}
	}

	// A YAML file over render's budget (32 MiB) is refused by its size,
	// never read.
	const huge = 40 << 20
	git("rm", "-q", "model.bin")
	randomFile(t, dir, "data.yaml", huge, 9)
	git("add", ".")
	git("commit", "-qm", "a huge YAML file")
	_, tree := fetchTree(t, c, srv)
	peak := watchHeap()
	_, err := render.Render(tree, "")
	top := peak()
	if !errors.Is(err, render.ErrInvalid) || !strings.Contains(err.Error(), "data.yaml") {
		t.Fatalf("render of a commit with a %s YAML file: %v, want it refused", mib(huge), err)
	}
	t.Logf("render refused the %s data.yaml with the heap at %s at most: %v", mib(huge), mib(top), err)
	if top > base+huge/4 {
		t.Errorf("render read the %s YAML file it refused: the heap reached %s", mib(huge), mib(top))
	}
}

const service = `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: app
spec:
  template:
    spec:
      containers:
        - image: ko://./cmd/app
`

// fetchTree fetches the repository's main and returns its head and the
// head's tree.
func fetchTree(t *testing.T, c *Cache, srv *servedRepo) (string, *object.Tree) {
	t.Helper()
	got, err := c.Fetch(context.Background(), "default/app", srv.URL, []string{"main"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := c.Commit("default/app", got.Heads["main"])
	if err != nil {
		t.Fatal(err)
	}
	tree, err := commit.Tree()
	if err != nil {
		t.Fatal(err)
	}
	return got.Heads["main"], tree
}

// pushed fetches the repository's new head and renders it, as a sync does.
func pushed(t *testing.T, c *Cache, srv *servedRepo) string {
	t.Helper()
	head, tree := fetchTree(t, c, srv)
	objs, err := render.Render(tree, "")
	if err != nil || len(objs) != 1 {
		t.Fatalf("render: %d objects, %v", len(objs), err)
	}
	return head
}

// heapInUse is the heap in use once garbage is collected; twice, since a
// sync.Pool keeps what it held until the second collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// watchHeap samples the heap's objects until the returned function is
// called, which reports their peak.
func watchHeap() func() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	stop, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
	go func() {
		defer close(done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		once.Do(func() { close(stop) })
		<-done
		return peak
	}
}

// rss is the process's resident set now and at its peak.
func rss() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "RSS unknown"
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") || strings.HasPrefix(line, "VmHWM:") {
			out = append(out, strings.Join(strings.Fields(line), " "))
		}
	}
	return strings.Join(out, ", ")
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
