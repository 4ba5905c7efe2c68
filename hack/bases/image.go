package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// epoch is every entry's mtime and the image's creation time.
var epoch = time.Unix(0, 0).UTC()

// Path is the images' PATH, Debian's (and Docker's) default.
const Path = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// build makes base name from debs (and the certificates of certs) in
// cache, and writes it as an OCI image layout at out.
func build(name string, b base, debs []debFile, certs debFile, cache, out string, check bool) error {
	start := time.Now()
	debs = append([]debFile(nil), debs...)
	sort.Slice(debs, func(i, j int) bool { return debs[i].Pkg.Name < debs[j].Pkg.Name })
	t := newTree()
	var debSize int64
	for _, d := range debs {
		if err := debTar(filepath.Join(cache, d.File), t.addTar); err != nil {
			return err
		}
		debSize += d.Size
	}
	var crts map[string][]byte
	if err := debTar(filepath.Join(cache, certs.File), func(r io.Reader) (err error) {
		crts, err = certificates(r)
		return err
	}); err != nil {
		return err
	}
	if err := configure(t, crts); err != nil {
		return err
	}
	if err := pyCompile(t); err != nil {
		return err
	}
	for _, n := range t.notes {
		log.Printf("%s: note: %s", name, n)
	}
	var layer bytes.Buffer
	if err := t.writeTar(&layer, epoch); err != nil {
		return err
	}
	pkgs := make([]pkg, 0, len(debs)+1)
	for _, d := range debs {
		pkgs = append(pkgs, d.Pkg)
	}
	img, err := image(layer.Bytes(), config(name, b, pkgs, certs.Pkg), arch(pkgs))
	if err != nil {
		return err
	}
	if err := writeLayout(out, name, img); err != nil {
		return err
	}
	if check {
		if err := chrootCheck(name, layer.Bytes(), b.check); err != nil {
			return err
		}
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	log.Printf("%s: %d packages (%.1f MB of .debs) → %s: layer %.1f MB gzipped, %.1f MB unpacked, %d files, in %s",
		name, len(debs)+1, float64(debSize+certs.Size)/1e6, digest, float64(m.Layers[0].Size)/1e6,
		float64(layer.Len())/1e6, len(t.files), time.Since(start).Round(100*time.Millisecond))
	return nil
}

// certificates reads ca-certificates' certificates (its .crt files under
// /usr/share/ca-certificates) from its file system tree.
func certificates(r io.Reader) (map[string][]byte, error) {
	certs := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		rel, ok := strings.CutPrefix(clean(h.Name), "usr/share/ca-certificates/")
		if !ok || !strings.HasSuffix(rel, ".crt") || h.Typeflag != tar.TypeReg {
			continue
		}
		if certs[rel], err = io.ReadAll(tr); err != nil {
			return nil, err
		}
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("no certificates under /usr/share/ca-certificates")
	}
	return certs, nil
}

// arch is the packages' Debian architecture (amd64, arm64: Go's names
// too), all those of "all" aside.
func arch(pkgs []pkg) string {
	for _, p := range pkgs {
		if p.Arch != "all" {
			return p.Arch
		}
	}
	return "amd64"
}

// config is the image's: PATH, the interpreter as Cmd, and labels naming
// the Debian packages it is made of.
func config(name string, b base, pkgs []pkg, certs pkg) v1.Config {
	var roots []string
	for _, p := range pkgs {
		for _, r := range b.roots {
			if p.Name == r {
				roots = append(roots, p.String())
			}
		}
	}
	return v1.Config{
		Env: []string{Path},
		Cmd: b.cmd,
		Labels: map[string]string{
			"org.opencontainers.image.title":       name,
			"org.opencontainers.image.description": "knit's " + name + " base, made from Debian's packages by hack/bases",
			"dev.knit.base.roots":                  strings.Join(roots, " "),
			"dev.knit.base.packages":               strings.Join(specs(append(pkgs, certs)), " "),
		},
	}
}

// image is a one-layer image of the uncompressed tar layer, with OCI
// media types.
func image(layer []byte, cfg v1.Config, arch string) (v1.Image, error) {
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layer)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.DefaultCompression), tarball.WithCompressedCaching)
	if err != nil {
		return nil, err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	base, err = mutate.ConfigFile(base, &v1.ConfigFile{
		Architecture: arch, OS: "linux", Created: v1.Time{Time: epoch},
		RootFS: v1.RootFS{Type: "layers"}, Config: cfg,
	})
	if err != nil {
		return nil, err
	}
	return mutate.Append(base, mutate.Addendum{
		Layer:   l,
		History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "knit hack/bases: Debian packages " + cfg.Labels["dev.knit.base.roots"]},
	})
}

// writeLayout writes img as the one image of an OCI image layout at dir,
// named name, replacing what was there only once it is whole.
func writeLayout(dir, name string, img v1.Image) error {
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendImage(img,
		layout.WithPlatform(v1.Platform{OS: cf.OS, Architecture: cf.Architecture}),
		layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": name})); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// chrootCheck unpacks layer into a temporary directory and runs the
// base's check, as nonroot and as root, and the shell check in it.
func chrootCheck(name string, layer []byte, check string) error {
	dir, err := os.MkdirTemp("", "knit-bases-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil { // the image's /, for nonroot too
		return err
	}
	untar := exec.Command("tar", "-x", "--numeric-owner", "-p", "-C", dir)
	untar.Stdin = bytes.NewReader(layer)
	if out, err := untar.CombinedOutput(); err != nil {
		return fmt.Errorf("unpack for the check: %w: %s", err, out)
	}
	for _, c := range []struct{ user, script string }{{"65532:65532", check}, {"0:0", check}, {"0:0", shellCheck}} {
		cmd := exec.Command("chroot", "--userspec="+c.user, dir, "/bin/sh", "-c", c.script)
		cmd.Env = []string{Path, "HOME=/", "LC_ALL=C"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("check as %s: %s: %w: %s", c.user, c.script, err, out)
		}
		log.Printf("%s: chroot check as %s: %s", name, c.user, strings.TrimSpace(string(out)))
	}
	return nil
}
