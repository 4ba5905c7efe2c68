package source

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// Pushes that each replace a large file leave one pack each in the cache;
// a collection keeps only what the head, the head it replaced and the
// retained commits (a live Revision's) reach. Checkouts of a retained commit run throughout and
// never fail or see half a tree (run with -race: the storage's index is
// rebuilt under them).
func TestCollectKeepsWhatIsWanted(t *testing.T) {
	const blob, pushes = 2 << 20, 6
	dir, git := gitRepo(t)
	srv := serveRepo(t, dir)
	var retained string
	var mu sync.Mutex
	c := &Cache{Dir: t.TempDir(), Egress: srv.Policy, GCBytes: -1, Retain: func(_ context.Context, key string) ([]string, error) {
		mu.Lock()
		defer mu.Unlock()
		if key != "default/app" || retained == "" {
			return nil, nil
		}
		return []string{retained}, nil
	}}
	// The same pushes into a cache that never collects, to compare.
	kept := &Cache{Dir: t.TempDir(), Egress: srv.Policy, GCBytes: 1 << 40}
	ctx := context.Background()

	var commits []string
	var checkouts sync.WaitGroup
	stop := make(chan struct{})
	for i := range pushes {
		writeFile(t, dir, "service.yaml", fmt.Sprintf("kind: Service # %d\n", i))
		randomFile(t, dir, "model.bin", blob, uint64(i))
		git("add", ".")
		git("commit", "-qm", fmt.Sprintf("push %d", i))
		commits = append(commits, git("rev-parse", "HEAD"))
		for _, cache := range []*Cache{c, kept} {
			if _, err := cache.Fetch(ctx, "default/app", srv.URL, []string{"main"}, nil); err != nil {
				t.Fatalf("fetch of push %d: %v", i, err)
			}
		}
		if i == 1 {
			mu.Lock()
			retained = commits[1]
			mu.Unlock()
			checkouts.Add(1)
			go checkoutWhileCollecting(t, c, commits[1], stop, &checkouts)
		}
	}
	close(stop)
	checkouts.Wait()

	collected, all := cacheSize(t, c, "default/app"), cacheSize(t, kept, "default/app")
	t.Logf("after %d pushes of a %d-byte file: %d bytes in the cache that collects, %d in one that does not", pushes, blob, collected, all)
	if collected > 4*blob {
		t.Errorf("the collected cache holds %d bytes, want about three %d-byte files (the head's, the previous head's, the retained commit's)", collected, blob)
	}
	for i, sha := range commits {
		_, err := c.Commit("default/app", sha)
		if want := i == 1 || i >= pushes-2; (err == nil) != want {
			t.Errorf("commit of push %d readable = %v, want %v", i, err == nil, want)
		}
	}
	for _, sha := range []string{commits[1], commits[pushes-1]} {
		out, err := c.Checkout("default/app", sha, t.TempDir())
		if err != nil {
			t.Fatalf("checkout of %s after collections: %v", sha[:7], err)
		}
		if got, want := git("hash-object", filepath.Join(out, "model.bin")), git("rev-parse", sha+":model.bin"); got != want {
			t.Errorf("model.bin checked out of %s is blob %s, want %s", sha[:7], got, want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(c.path("default/app"), "objects", "pack", "*"))
	if len(left) != 2 || !strings.HasSuffix(left[0], ".idx") {
		t.Fatalf("after a collection the cache holds %v, want one pack and its index", left)
	}
	// git itself reads the pack a collection wrote, and finds the head
	// and the retained commit complete (fsck knows they are shallow).
	git("verify-pack", left[0])
	git("--git-dir="+c.path("default/app"), "fsck", "--no-dangling", commits[1], commits[pushes-1])
}

// checkoutWhileCollecting checks out commit sha again and again until stop.
func checkoutWhileCollecting(t *testing.T, c *Cache, sha string, stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	for n := 0; ; n++ {
		select {
		case <-stop:
			if n == 0 {
				t.Error("no checkout ran during the collections")
			}
			return
		default:
		}
		root, err := os.MkdirTemp(t.TempDir(), "co")
		if err != nil {
			t.Error(err)
			return
		}
		out, err := c.Checkout("default/app", sha, root)
		if err != nil {
			t.Errorf("checkout %d of a retained commit during collections: %v", n, err)
			return
		}
		if fi, err := os.Stat(filepath.Join(out, "model.bin")); err != nil || fi.Size() != 2<<20 {
			t.Errorf("checkout %d: model.bin = %v, %v", n, fi, err)
			return
		}
		_ = os.RemoveAll(root)
	}
}

// The commits a collection keeps: the heads, those they replaced, the
// retained ones.
func TestKeep(t *testing.T) {
	h := func(s string) plumbing.Hash { return plumbing.NewHash(s) }
	r := &repo{}
	for _, heads := range []map[string]string{
		{"main": "aa", "dev": "bb"},
		{"main": "aa", "dev": "bb"}, // a poll: nothing replaced
		{"main": "cc", "dev": "bb"},
	} {
		r.noteHeads(heads)
	}
	c := &Cache{Retain: func(context.Context, string) ([]string, error) { return []string{h("dd").String()}, nil }}
	got, err := c.keep(context.Background(), "k", r)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
	want := []plumbing.Hash{h("aa"), h("bb"), h("bb"), h("cc"), h("dd")}
	if !slices.Equal(got, want) {
		t.Errorf("keep = %v, want %v", got, want)
	}
}

func TestGrown(t *testing.T) {
	tests := []struct {
		gcBytes, size, collected int64
		want                     bool
	}{
		{gcBytes: -1, size: 1, want: true},
		{size: DefaultGCBytes, want: false},
		{size: DefaultGCBytes + 1, want: true},
		{size: 3 * DefaultGCBytes, collected: 2 * DefaultGCBytes, want: false},
		{size: 3*DefaultGCBytes + 1, collected: 2 * DefaultGCBytes, want: true},
		{gcBytes: 10, size: 11, want: true},
	}
	for _, tc := range tests {
		c := &Cache{GCBytes: tc.gcBytes}
		if got := c.grown(tc.size, tc.collected); got != tc.want {
			t.Errorf("GCBytes %d: grown(%d, %d) = %v, want %v", tc.gcBytes, tc.size, tc.collected, got, tc.want)
		}
	}
}
