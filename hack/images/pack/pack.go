package pack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Defaults a Spec falls back to. NonRoot is distroless's nonroot user, so a
// chart's runAsUser/fsGroup 65532 matches the image's own /etc/passwd.
const (
	NonRootUID  = 65532
	NonRootName = "nonroot"
	// DefaultPath is the PATH of an image whose Spec sets none.
	DefaultPath = "/usr/local/bin:/usr/bin:/bin"
	// CABundlePath is where the CA bundle goes in the image: the first
	// path Go's crypto/x509 (and Debian's OpenSSL) reads on Linux.
	CABundlePath = "/etc/ssl/certs/ca-certificates.crt"
)

// File is one path of the build machine to copy into the image.
type File struct {
	// Src is the path on the build machine. A symlink is followed; a
	// directory is copied with everything under it (symlinks inside it
	// stay symlinks).
	Src string
	// Dest is the absolute path in the image.
	Dest string
}

// Spec says what goes into an image.
type Spec struct {
	// Files are copied in; a dynamically linked ELF program among them
	// (not inside a copied directory) brings its shared libraries and the
	// dynamic loader along, at the paths ldd reports.
	Files []File
	// Entrypoint is the image's ENTRYPOINT; Cmd its default arguments.
	Entrypoint []string
	Cmd        []string
	// Env holds KEY=VALUE pairs. PATH=DefaultPath is added unless set.
	Env []string
	// User runs the entrypoint; default "65532:65532".
	User string
	// WorkingDir defaults to "/".
	WorkingDir string
	// Ports are recorded as exposed TCP ports ("8080").
	Ports []string
	// CABundle is the build machine's CA bundle, copied to CABundlePath;
	// empty leaves the image without one.
	CABundle string
	// Arch is the config's architecture, default runtime.GOARCH; the OS is
	// always linux. ctr images import skips an image without the two.
	Arch string
	// Created is the config's creation time and every entry's mtime;
	// the zero value means the Unix epoch.
	Created time.Time
	// Base is the image the layer goes on top of; nil for none. Its
	// config gives way to this Spec's, field by field as set here.
	Base v1.Image
}

// Image packs s into a single-layer image with OCI media types, or
// one layer on top of s.Base.
func Image(s Spec) (v1.Image, error) {
	s = s.withDefaults()
	data, err := Layer(s)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	if s.Base != nil {
		base = s.Base
	}
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: s.Created}, CreatedBy: "knit hack/images"},
	})
	if err != nil {
		return nil, fmt.Errorf("append layer: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS = "linux"
	cfg.Architecture = s.Arch
	cfg.Created = v1.Time{Time: s.Created}
	cfg.Config.Entrypoint = s.Entrypoint
	cfg.Config.Cmd = s.Cmd
	cfg.Config.Env = s.Env
	cfg.Config.User = s.User
	cfg.Config.WorkingDir = s.WorkingDir
	if len(s.Ports) > 0 {
		cfg.Config.ExposedPorts = map[string]struct{}{}
		for _, p := range s.Ports {
			cfg.Config.ExposedPorts[p+"/tcp"] = struct{}{}
		}
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("write config: %w", err)
	}
	return img, nil
}

// Layer returns the uncompressed tar of s's single layer.
func Layer(s Spec) ([]byte, error) {
	s = s.withDefaults()
	if len(s.Entrypoint) == 0 {
		return nil, errors.New("no entrypoint")
	}
	t := newTree(s.Created)
	if err := t.addBase(s.CABundle); err != nil {
		return nil, err
	}
	for _, f := range s.Files {
		if err := t.addFile(f); err != nil {
			return nil, err
		}
	}
	return t.tar()
}

func (s Spec) withDefaults() Spec {
	if s.User == "" {
		s.User = fmt.Sprintf("%d:%d", NonRootUID, NonRootUID)
	}
	if s.WorkingDir == "" {
		s.WorkingDir = "/"
	}
	if s.Arch == "" {
		s.Arch = runtime.GOARCH
	}
	if s.Created.IsZero() {
		s.Created = time.Unix(0, 0)
	}
	s.Created = s.Created.UTC()
	hasPath := false
	for _, kv := range s.Env {
		if len(kv) >= 5 && kv[:5] == "PATH=" {
			hasPath = true
		}
	}
	if !hasPath {
		s.Env = append([]string{"PATH=" + DefaultPath}, s.Env...)
	}
	return s
}
