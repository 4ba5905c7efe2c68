package images

import (
	"context"
	"io"
	"strings"

	"github.com/containerd/containerd/v2/core/mount"
	"github.com/containerd/containerd/v2/core/snapshots"
	"github.com/containerd/containerd/v2/pkg/archive"
	"github.com/containerd/containerd/v2/plugins/snapshots/overlay"
)

// newSnapshotter is containerd's overlay snapshotter at root.
func newSnapshotter(root string) (snapshots.Snapshotter, error) {
	return overlay.NewSnapshotter(root)
}

// apply unpacks the tar stream r into the snapshot mounts describe, as
// containerd's applier does on Linux: straight into the overlay's upper
// directory, whiteouts made as overlayfs keeps them, the lower layers
// consulted for what a hard link or an opaque directory refers to;
// into the directory itself for a first layer (a bind mount).
func apply(ctx context.Context, mounts []mount.Mount, r io.Reader) error {
	if len(mounts) == 1 && mounts[0].Type == "overlay" {
		upper, lowers := overlayDirs(mounts[0].Options)
		if upper != "" {
			opts := []archive.ApplyOpt{archive.WithConvertWhiteout(archive.OverlayConvertWhiteout)}
			if len(lowers) > 0 {
				opts = append(opts, archive.WithParents(lowers))
			}
			_, err := archive.Apply(ctx, upper, r, opts...)
			return err
		}
	}
	if len(mounts) == 1 && mounts[0].Type == "bind" {
		_, err := archive.Apply(ctx, mounts[0].Source, r)
		return err
	}
	return mount.WithTempMount(ctx, mounts, func(root string) error {
		_, err := archive.Apply(ctx, root, r)
		return err
	})
}

func overlayDirs(options []string) (upper string, lowers []string) {
	for _, o := range options {
		if v, ok := strings.CutPrefix(o, "upperdir="); ok {
			upper = v
		} else if v, ok := strings.CutPrefix(o, "lowerdir="); ok {
			lowers = strings.Split(v, ":")
		}
	}
	return upper, lowers
}
