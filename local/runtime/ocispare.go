package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/containerd/containerd/v2/core/mount"

	"github.com/knitops/knit/local/images"
)

// spareDelay is how long after a run takes (or makes) its root filesystem
// the next spare is made: not while the run's own start competes for the
// machine.
const spareDelay = time.Second

// maxSpareRoots bounds how many images keep a spare root filesystem: the
// ones most recently started. Each costs an overlay mount, an empty
// upper directory and a snapshot record, nothing that runs.
const maxSpareRoots = 32

// spareRoots keeps, for each image recently started, one container run's
// root filesystem made ahead of need: a snapshot prepared over the
// image's layers and mounted at <bundle>/rootfs, with nothing else in the
// bundle yet. Preparing a snapshot commits the snapshotter's metadata to
// disk (1–25 ms on a busy machine) and mounting it takes a few more; a
// replica started from zero takes the spare instead, and the next one is
// made in the background. A spare is only a root filesystem: everything
// about the pod (user, working directory, /etc files, spec) is written
// when it is taken, as for a run made on the spot.
type spareRoots struct {
	bundles string
	// prepare makes a run's root filesystem: mountRoot, unless a test
	// stands in.
	prepare func(ctx context.Context, bundle, id string, img *images.Image) error
	// discard removes a spare that was never taken.
	discard func(id string)
	delay   time.Duration // spareDelay, unless a test is in a hurry

	mu     sync.Mutex
	ready  map[string]string // image digest → the spare's run id
	making map[string]bool   // image digest → a spare being made
	recent []string          // image digests, least recently started first
	closed bool
	wg     sync.WaitGroup
}

func newSpareRoots(bundles string, store *images.Store, discard func(id string)) *spareRoots {
	return &spareRoots{
		bundles: bundles, discard: discard, delay: spareDelay,
		prepare: func(ctx context.Context, bundle, id string, img *images.Image) error {
			return mountRoot(ctx, store, bundle, id, img)
		},
		ready: map[string]string{}, making: map[string]bool{},
	}
}

// newRunID names a container run: its runc container, bundle directory,
// snapshot and cgroup. Random, as containerd's IDs are, since a spare is
// named before anyone knows which replica will take it.
func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "knit-" + hex.EncodeToString(b[:])
}

// take returns the run id of a root filesystem of img ready to use, and
// whether it was a spare; without one it makes it now. Either way a new
// spare of img is made in the background for the next run, spareDelay
// later.
func (s *spareRoots) take(ctx context.Context, img *images.Image) (string, bool, error) {
	s.mu.Lock()
	id, spare := s.ready[img.Digest]
	delete(s.ready, img.Digest)
	s.mu.Unlock()
	if !spare {
		id = newRunID()
		if err := s.prepare(ctx, filepath.Join(s.bundles, id), id, img); err != nil {
			return id, false, err
		}
	}
	s.mu.Lock()
	s.touch(img.Digest)
	s.mu.Unlock()
	time.AfterFunc(s.delay, func() { s.refill(img) })
	return id, spare, nil
}

// touch makes digest the most recently started image, and forgets the
// spare of the least recently started one beyond maxSpareRoots. s.mu is
// held.
func (s *spareRoots) touch(digest string) {
	s.recent = append(slices.DeleteFunc(s.recent, func(d string) bool { return d == digest }), digest)
	for len(s.recent) > maxSpareRoots {
		old := s.recent[0]
		s.recent = s.recent[1:]
		if id, ok := s.ready[old]; ok {
			delete(s.ready, old)
			s.wg.Go(func() { s.discard(id) })
		}
	}
}

// refill starts making a spare of img unless one is ready or on its way,
// the image is no longer among the recently started, or s is closed.
func (s *spareRoots) refill(img *images.Image) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.making[img.Digest] || !slices.Contains(s.recent, img.Digest) {
		return
	}
	if _, ok := s.ready[img.Digest]; ok {
		return
	}
	s.making[img.Digest] = true
	s.wg.Go(func() { s.make(img) })
}

func (s *spareRoots) make(img *images.Image) {
	id := newRunID()
	err := s.prepare(context.Background(), filepath.Join(s.bundles, id), id, img)
	s.mu.Lock()
	delete(s.making, img.Digest)
	keep := err == nil && !s.closed && slices.Contains(s.recent, img.Digest)
	if keep {
		s.ready[img.Digest] = id
	}
	s.mu.Unlock()
	if err != nil {
		// Not a failure of any replica: the next start makes its root
		// filesystem itself, and reports what goes wrong then.
		slog.Info("Spare root filesystem not made", "image", img.Reference, "error", err.Error())
	}
	if !keep {
		s.discard(id)
	}
}

// close stops making spares and removes those made.
func (s *spareRoots) close() {
	s.mu.Lock()
	s.closed = true
	ids := make([]string, 0, len(s.ready))
	for _, id := range s.ready {
		ids = append(ids, id)
	}
	clear(s.ready)
	s.mu.Unlock()
	s.wg.Wait()
	for _, id := range ids {
		s.discard(id)
	}
}

// mountRoot makes run id's root filesystem: a snapshot of img mounted at
// <bundle>/rootfs.
func mountRoot(ctx context.Context, store *images.Store, bundle, id string, img *images.Image) error {
	rootfs := filepath.Join(bundle, "rootfs")
	if err := os.MkdirAll(rootfs, 0o700); err != nil {
		return err
	}
	ms, err := store.Prepare(ctx, id, img)
	if err != nil {
		return err
	}
	if err := mount.All(ms, rootfs); err != nil {
		return fmt.Errorf("mount root filesystem: %w", err)
	}
	return nil
}
