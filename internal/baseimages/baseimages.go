// Package baseimages finds the base images `make base-images` builds
// from Debian's packages (hack/bases) and pushes them to a registry, for
// the tests and benchmarks whose Dockerfiles build FROM python or node
// while nothing may come from a registry outside this machine.
package baseimages

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/knitops/knit/internal/moduleroot"
)

// EnvDir overrides where the layouts are looked for.
const EnvDir = "KNIT_BASE_IMAGES"

// Dir is the OCI image layout of base name: $KNIT_BASE_IMAGES/<name>,
// else bin/bases/<name> of knit's module root, the first directory above
// the working one whose go.mod is knit's (a test runs in its package's
// directory; hack/images has a go.mod of its own).
func Dir(base string) (string, error) {
	root := os.Getenv(EnvDir)
	if root == "" {
		mod, err := moduleroot.Dir()
		if err != nil {
			return "", fmt.Errorf("%w: run make base-images in knit's clone and work there, or set %s to the bases it built", err, EnvDir)
		}
		root = filepath.Join(mod, "bin", "bases")
	}
	dir := filepath.Join(root, base)
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		return "", fmt.Errorf("base image %s is not built in %s: run make base-images (on Debian)", base, root)
	}
	return dir, nil
}

// Push pushes the one image of the OCI image layout at layoutDir to ref
// and returns its manifest digest. A registry on loopback is spoken to in
// plain HTTP, and so is one opts says is insecure (name.Insecure).
func Push(ctx context.Context, layoutDir, ref string, opts ...name.Option) (digest string, err error) {
	p, err := layout.FromPath(layoutDir)
	if err != nil {
		return "", fmt.Errorf("base image layout %s: %w", layoutDir, err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return "", err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return "", err
	}
	if len(m.Manifests) != 1 {
		return "", fmt.Errorf("base image layout %s holds %d images, want 1", layoutDir, len(m.Manifests))
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		return "", err
	}
	if loopback(ref) {
		opts = append(opts, name.Insecure)
	}
	tag, err := name.ParseReference(ref, opts...)
	if err != nil {
		return "", err
	}
	if err := remote.Write(tag, img, remote.WithContext(ctx)); err != nil {
		return "", fmt.Errorf("push %s: %w", ref, err)
	}
	return m.Manifests[0].Digest.String(), nil
}

// loopback reports whether ref's registry is on this machine's loopback.
func loopback(ref string) bool {
	r, err := name.ParseReference(ref)
	if err != nil {
		return false
	}
	host, _, err := net.SplitHostPort(r.Context().RegistryStr())
	if err != nil {
		host = r.Context().RegistryStr()
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}
