//go:build !linux

package images

import (
	"context"
	"errors"
	"io"

	"github.com/containerd/containerd/v2/core/mount"
	"github.com/containerd/containerd/v2/core/snapshots"
)

// errNotLinux: images are unpacked into overlayfs, which only Linux has.
var errNotLinux = errors.New("container images need Linux (overlayfs)")

func newSnapshotter(string) (snapshots.Snapshotter, error) { return nil, errNotLinux }

func apply(context.Context, []mount.Mount, io.Reader) error { return errNotLinux }
