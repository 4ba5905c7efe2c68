package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/knitops/knit/local/images"
)

// fakeRoots stands in for mounting snapshots: it records which run ids
// were made, for which image, and which were discarded.
type fakeRoots struct {
	mu        sync.Mutex
	made      map[string]string // run id → image digest
	discarded []string
	fail      bool
	gate      chan struct{} // when set, background makes wait for it
}

func (f *fakeRoots) spares(t *testing.T) *spareRoots {
	s := newSpareRoots(t.TempDir(), nil, func(id string) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.discarded = append(f.discarded, id)
	})
	s.delay = 0
	s.prepare = func(_ context.Context, _, id string, img *images.Image) error {
		if f.gate != nil {
			<-f.gate
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.fail {
			return errors.New("no room")
		}
		f.made[id] = img.Digest
		return nil
	}
	return s
}

func waitSpare(t *testing.T, s *spareRoots, digest string) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.mu.Lock()
		id, ok := s.ready[digest]
		s.mu.Unlock()
		if ok {
			return id
		}
	}
	t.Fatalf("no spare of %s made", digest)
	return ""
}

func TestSpareRootIsTakenByTheNextRun(t *testing.T) {
	f := &fakeRoots{made: map[string]string{}}
	s := f.spares(t)
	img := &images.Image{Digest: "sha256:a"}

	first, spare, err := s.take(context.Background(), img)
	if err != nil || spare {
		t.Fatalf("first run: spare %v, error %v; want one made on the spot", spare, err)
	}
	next := waitSpare(t, s, img.Digest)
	if next == first {
		t.Fatalf("the spare is the first run's own root filesystem %s", first)
	}
	second, spare, err := s.take(context.Background(), img)
	if err != nil || !spare || second != next {
		t.Fatalf("second run took %s (spare %v, error %v); want the spare %s", second, spare, err, next)
	}
	third := waitSpare(t, s, img.Digest)
	if third == second || third == first {
		t.Fatalf("the refill reused run id %s", third)
	}
	if got := f.made[third]; got != img.Digest {
		t.Fatalf("the refill is of image %q, want %q", got, img.Digest)
	}

	s.close()
	if !slices.Equal(f.discarded, []string{third}) {
		t.Fatalf("close discarded %v; want only the untaken spare %s (taken runs are their replicas' to tear down)", f.discarded, third)
	}
}

func TestSpareRootsAreOnePerImageAndBounded(t *testing.T) {
	f := &fakeRoots{made: map[string]string{}}
	s := f.spares(t)
	for i := range maxSpareRoots + 3 {
		img := &images.Image{Digest: fmt.Sprintf("sha256:%d", i)}
		if _, _, err := s.take(context.Background(), img); err != nil {
			t.Fatal(err)
		}
		waitSpare(t, s, img.Digest)
		s.refill(img) // a spare is ready: nothing more is made
	}
	s.wg.Wait()
	s.mu.Lock()
	ready := len(s.ready)
	_, oldest := s.ready["sha256:0"]
	s.mu.Unlock()
	if ready != maxSpareRoots || oldest {
		t.Fatalf("%d spares ready (the least recently started one kept: %v); want %d, the most recent images'", ready, oldest, maxSpareRoots)
	}
	if len(f.discarded) != 3 {
		t.Fatalf("%d spares discarded, want the 3 of the least recently started images", len(f.discarded))
	}
	// Each image's first run made its root on the spot and one spare.
	if len(f.made) != 2*(maxSpareRoots+3) {
		t.Fatalf("%d root filesystems made, want %d", len(f.made), 2*(maxSpareRoots+3))
	}
	s.close()
}

func TestSpareRootFailureFallsBackToTheRun(t *testing.T) {
	f := &fakeRoots{made: map[string]string{}}
	s := f.spares(t)
	img := &images.Image{Digest: "sha256:a", Reference: "registry.test/app:1"}
	if _, _, err := s.take(context.Background(), img); err != nil {
		t.Fatal(err)
	}
	waitSpare(t, s, img.Digest)
	f.mu.Lock()
	f.fail = true
	f.mu.Unlock()
	if _, spare, err := s.take(context.Background(), img); err != nil || !spare {
		t.Fatalf("took spare %v, error %v", spare, err)
	}
	s.wg.Wait() // the refill failed
	if _, spare, err := s.take(context.Background(), img); err == nil || spare {
		t.Fatalf("with no spare and no room: spare %v, error %v; want the run's own error", spare, err)
	}
	s.close()
}

func TestSpareRootMadeAfterCloseIsDiscarded(t *testing.T) {
	f := &fakeRoots{made: map[string]string{}, gate: make(chan struct{})}
	s := f.spares(t)
	img := &images.Image{Digest: "sha256:a"}
	s.mu.Lock()
	s.touch(img.Digest) // as a run's take does
	s.mu.Unlock()
	s.refill(img)
	done := make(chan struct{})
	go func() { s.close(); close(done) }()
	// close waits for the make under way, which then finds it closed.
	for {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(f.gate)
	<-done
	if len(f.made) != 1 || len(f.discarded) != 1 {
		t.Fatalf("made %v, discarded %v; want the one made during close discarded", f.made, f.discarded)
	}
	s.refill(img)
	s.wg.Wait()
	if len(f.made) != 1 {
		t.Fatalf("a spare was made after close: %v", f.made)
	}
}

func TestSpareRootIsNotMadeDuringTheRunsStart(t *testing.T) {
	f := &fakeRoots{made: map[string]string{}}
	s := f.spares(t)
	s.delay = time.Hour
	if _, _, err := s.take(context.Background(), &images.Image{Digest: "sha256:a"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	f.mu.Lock()
	made := len(f.made)
	f.mu.Unlock()
	if made != 1 {
		t.Fatalf("%d root filesystems made right after the run's start; want only the run's own", made)
	}
	s.close()
}
