package images

import (
	"context"
	"fmt"

	"github.com/containerd/containerd/v2/core/mount"
	"github.com/containerd/containerd/v2/core/snapshots"
)

// Prepare makes a root filesystem for one run of a container from img:
// an active snapshot named key over the image's layers, writable in a
// directory of its own, returned as the mounts to make at the
// container's root. An image without layers gets an empty directory. A
// read-only root is the runtime's to make (runc remounts it read-only
// once it has made its mount points in it), as containerd leaves it.
// Release removes it.
func (s *Store) Prepare(ctx context.Context, key string, img *Image) ([]mount.Mount, error) {
	mounts, err := s.snap.Prepare(ctx, key, img.chainID, snapshots.WithLabels(map[string]string{"knit.dev/image": img.Digest}))
	if err != nil {
		return nil, fmt.Errorf("root filesystem of %s: %w", img.Reference, err)
	}
	return mounts, nil
}

// Release removes the root filesystem Prepare made for key. Its mounts
// must be gone.
func (s *Store) Release(ctx context.Context, key string) error {
	if err := s.snap.Remove(ctx, key); err != nil {
		return fmt.Errorf("remove root filesystem %s: %w", key, err)
	}
	return nil
}
