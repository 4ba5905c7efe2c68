package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// maxLayout bounds what the push step copies of a Dockerfile build's
// image layout.
const maxLayout = 8 << 30

// pushLayout pushes the one image of the layout the dockerfile step left
// in the workspace as <image>:<tag> and returns it by digest. That step
// ran the user's RUN steps, which share its processes' view, so the
// layout is first copied into the push step's own /tmp through os.Root:
// only regular files inside it, no symlink that could lead to the
// registry's credentials. The registry checks every blob's digest.
func pushLayout(ctx context.Context, o options, out io.Writer) (string, error) {
	tag, err := name.NewTag(o.image+":"+o.tag, o.nameOptions()...)
	if err != nil {
		return "", fmt.Errorf("image %s:%s: %w", o.image, o.tag, err)
	}
	private, err := os.MkdirTemp("", "knit-builder-layout-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(private)
	if err := copyLayout(filepath.Join(o.workspace, layoutName), private); err != nil {
		return "", err
	}
	img, err := layoutImage(private)
	if err != nil {
		return "", err
	}
	digest, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("digest: %w", err)
	}
	logf(out, "pushing %s (%s)", tag, digest)
	if err := remote.Write(tag, img, o.remoteOptions(ctx)...); err != nil {
		return "", fmt.Errorf("push %s: %w", tag, err)
	}
	return tag.Context().Name() + "@" + digest.String(), nil
}

// layoutImage is the single image of the layout at dir.
func layoutImage(dir string) (v1.Image, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("the build's image layout: %w", err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("the build's image layout: %w", err)
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("the build's image layout holds %d manifests, want one", len(m.Manifests))
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		return nil, fmt.Errorf("the build's image: %w", err)
	}
	return img, nil
}

// copyLayout copies the regular files and directories under src into
// dst, opened inside src alone; anything else (a symlink, a device) is
// refused, and so is more than maxLayout bytes.
func copyLayout(src, dst string) error {
	root, err := os.OpenRoot(src)
	if err != nil {
		return fmt.Errorf("the build's image layout: %w", err)
	}
	defer root.Close()
	var total int64
	return fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("the build's image layout: %w", err)
		}
		target := filepath.Join(dst, filepath.FromSlash(p))
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o700)
		case !d.Type().IsRegular():
			return fmt.Errorf("the build's image layout holds %s, which is not a regular file", p)
		}
		n, err := copyFromRoot(root, p, target, maxLayout-total)
		total += n
		return err
	})
}

// copyFromRoot copies one regular file of root to dst, at most limit
// bytes.
func copyFromRoot(root *os.Root, p, dst string, limit int64) (int64, error) {
	in, err := root.Open(filepath.FromSlash(p))
	if err != nil {
		return 0, fmt.Errorf("the build's image layout: %w", err)
	}
	defer in.Close()
	if info, err := in.Stat(); err != nil || !info.Mode().IsRegular() {
		return 0, fmt.Errorf("the build's image layout: %s is not a regular file", p)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, io.LimitReader(in, limit+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = errors.New("the build's image layout is larger than 8 GiB")
	}
	return n, err
}
