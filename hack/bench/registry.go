package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/knitops/knit/internal/testregistry"
)

// loopbackRegistry is go-containerregistry's in-memory registry served by
// the bench's process on 127.0.0.1: what knit dev and crane pull from,
// with no network and no other registry's latency in the numbers.
type loopbackRegistry struct {
	host  string // 127.0.0.1:port
	close func()
}

// startRegistry serves a registry on a free loopback port until close.
func startRegistry() (*loopbackRegistry, error) {
	host, stop, err := testregistry.Serve(false)
	if err != nil {
		return nil, err
	}
	return &loopbackRegistry{host: host, close: stop}, nil
}

// ref is the reference of repoTag (repository:tag) on r.
func (r *loopbackRegistry) ref(repoTag string) string { return r.host + "/" + repoTag }

// imageFile is one regular file of an image the bench packs.
type imageFile struct {
	path string // inside the image, without a leading slash
	mode int64
	body []byte
}

// tarOf is a tar stream of files and the directories above them, in
// path order, so equal files make equal layers.
func tarOf(files []imageFile) ([]byte, error) {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b imageFile) int { return strings.Compare(a.path, b.path) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, f := range files {
		var parents []string
		for d := pathpkg.Dir(f.path); d != "." && !dirs[d]; d = pathpkg.Dir(d) {
			dirs[d] = true
			parents = append(parents, d)
		}
		for _, d := range slices.Backward(parents) {
			if err := tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
				return nil, err
			}
		}
		h := &tar.Header{Name: f.path, Typeflag: tar.TypeReg, Mode: f.mode, Size: int64(len(f.body))}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// layerOf is files as a gzip-compressed layer, and the size of its tar
// stream. The compressed bytes are made once and kept: a layer made
// from the uncompressed stream would be compressed again for its digest
// and for every upload.
func layerOf(files []imageFile) (v1.Layer, int64, error) {
	raw, err := tarOf(files)
	if err != nil {
		return nil, 0, err
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	if err != nil {
		return nil, 0, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, 0, err
	}
	if err := zw.Close(); err != nil {
		return nil, 0, err
	}
	b := gz.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	return l, int64(len(raw)), err
}

// pushImage pushes a linux/amd64 image of layers with cfg to ref (plain
// HTTP: go-containerregistry speaks it to loopback) and returns it.
func pushImage(ref string, cfg v1.Config, layers ...v1.Layer) (v1.Image, error) {
	return testregistry.PushLayers(ref, cfg, layers...)
}

// The app image: the helloworld binary where ko puts it, run as the
// nonroot user of ko's default base (distroless static), which has an
// /etc/passwd and /etc/group naming it.
const (
	appImagePath = "ko-app/" + helloBinary
	appImageUser = "65532:65532"
	appPasswd    = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	appGroup     = "root:x:0:\nnonroot:x:65532:\n"
)

// appImageFiles are the app image's files, bin its helloworld binary.
func appImageFiles(bin string) ([]imageFile, error) {
	body, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	return []imageFile{
		{path: appImagePath, mode: 0o755, body: body},
		{path: "etc/passwd", mode: 0o644, body: []byte(appPasswd)},
		{path: "etc/group", mode: 0o644, body: []byte(appGroup)},
	}, nil
}

// appImageConfig runs the binary as ko's images do; knit sets PORT and
// the Service sets TARGET.
func appImageConfig() v1.Config {
	return v1.Config{Entrypoint: []string{"/" + appImagePath}, User: appImageUser}
}

// writeFiles writes files under dir, as a root filesystem to run the
// app in with runc alone.
func writeFiles(dir string, files []imageFile) error {
	var errs []error
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		errs = append(errs, os.WriteFile(p, f.body, os.FileMode(f.mode)))
	}
	return errors.Join(errs...)
}

// randomLayerFiles are files×size bytes of seeded random bytes: the
// same seed gives the same files, and so the same layer digest in
// every run; random bytes do not compress, so what is pulled is what
// is written.
func randomLayerFiles(seed byte, files, size int) []imageFile {
	var key [32]byte
	key[0] = seed
	rng := rand.NewChaCha8(key)
	out := make([]imageFile, files)
	for i := range out {
		body := make([]byte, size)
		_, _ = rng.Read(body) // never fails
		out[i] = imageFile{path: fmt.Sprintf("data/%d/%02d.bin", seed, i), mode: 0o644, body: body}
	}
	return out
}
