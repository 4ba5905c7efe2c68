package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/crane"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/local/images"
)

// The pull subject: an image of pullLayers layers of pullFiles files of
// pullFileSize seeded random bytes each (50 MiB), so a first pull moves
// about as much as a small app image and its base, with nothing to gain
// from compression.
const (
	pullLayers   = 5
	pullFiles    = 10
	pullFileSize = 1 << 20
	pullRepoTag  = "bench/big:1"
	// pullTimeout bounds one pull; a loopback pull of 50 MiB takes
	// seconds.
	pullTimeout = 2 * time.Minute
)

// pullRun is one pull by each puller, each into a fresh destination.
type pullRun struct {
	// knit is knit's image store (local/images) pulling into a new
	// store: download, gunzip, digest checks, unpack into overlay
	// snapshots.
	knit time.Duration
	// craneTar and craneOCI are crane pull, to a tarball and with
	// --format oci to a layout: download and digest checks, no unpack.
	craneTar, craneOCI time.Duration
}

// pullResult is the pull part of the report.
type pullResult struct {
	runs []pullRun
	// skipped says why the part did not run; "" when it did.
	skipped string
	// compressed is the layers as pushed and pulled, uncompressed as
	// tar streams; layers counts them.
	compressed, uncompressed int64
	layers                   int
	// disk is what each puller left on disk (bytes in its files),
	// from the last run.
	disk pullRun64
	push time.Duration
}

// pullRun64 is a byte count per puller.
type pullRun64 struct{ knit, craneTar, craneOCI int64 }

// puller is one way of pulling; pull times it into dst, a directory
// that does not exist yet, and field and disk say where its numbers go.
type puller struct {
	label string
	dir   string // dst's name
	pull  func(ctx context.Context, ref, dst string) (time.Duration, error)
	field func(*pullRun) *time.Duration
	disk  func(*pullRun64) *int64
}

var pullers = []puller{
	{"knit store", "knit", knitPull, func(r *pullRun) *time.Duration { return &r.knit }, func(d *pullRun64) *int64 { return &d.knit }},
	{"crane pull", "crane-tar", craneTarPull, func(r *pullRun) *time.Duration { return &r.craneTar }, func(d *pullRun64) *int64 { return &d.craneTar }},
	{"crane pull --format oci", "crane-oci", craneOCIPull, func(r *pullRun) *time.Duration { return &r.craneOCI }, func(d *pullRun64) *int64 { return &d.craneOCI }},
}

// pullSkipReason says why this machine cannot run the pull part: knit's
// store unpacks layers as containerd does, owners and all, which takes
// root, as knit dev runs images only as root.
func pullSkipReason() string {
	if os.Geteuid() != 0 {
		return "knit's image store unpacks layers as root only (knit dev runs images only as root)"
	}
	return ""
}

// measurePull pushes the pull subject to a loopback registry and pulls
// it runs times with each puller, into fresh destinations with fresh
// HTTP transports (no connection kept from a previous pull); the
// pullers take turns in rotating order.
func measurePull(ctx context.Context, runs int, progress io.Writer) (*pullResult, error) {
	res := &pullResult{layers: pullLayers}
	if res.skipped = pullSkipReason(); res.skipped != "" {
		fmt.Fprintf(progress, "pull: skipped: %s\n", res.skipped)
		return res, nil
	}
	tmp, err := os.MkdirTemp("", "knit-bench-pull-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	reg, err := startRegistry()
	if err != nil {
		return nil, err
	}
	defer reg.close()
	ref := reg.ref(pullRepoTag)
	began := time.Now()
	if res.compressed, res.uncompressed, err = pushRandomImage(ref); err != nil {
		return nil, err
	}
	res.push = time.Since(began)
	fmt.Fprintf(progress, "pull: %s (%s compressed) packed and pushed in %s\n", ref, fmtMiB(uint64(res.compressed)), res.push.Round(time.Millisecond))

	for i := range runs {
		var run pullRun
		for _, p := range turnOrder(pullers, i) {
			dst := filepath.Join(tmp, fmt.Sprintf("%d-%s", i+1, p.dir))
			ctx, cancel := context.WithTimeout(ctx, pullTimeout)
			d, err := p.pull(ctx, ref, dst)
			cancel()
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", p.label, ref, err)
			}
			*p.field(&run) = d
			*p.disk(&res.disk) = filesSize(dst)
			if err := os.RemoveAll(dst); err != nil {
				return nil, err
			}
			fmt.Fprintf(progress, "pull %d/%d: %s in %s\n", i+1, runs, p.label, d.Round(time.Millisecond))
		}
		res.runs = append(res.runs, run)
	}
	return res, nil
}

// pushRandomImage pushes the pull subject to ref and returns the sizes
// of its layers, compressed and as tar streams.
func pushRandomImage(ref string) (compressed, uncompressed int64, err error) {
	var layers []v1.Layer
	for i := range pullLayers {
		l, raw, err := layerOf(randomLayerFiles(byte(i), pullFiles, pullFileSize))
		if err != nil {
			return 0, 0, err
		}
		size, err := l.Size()
		if err != nil {
			return 0, 0, err
		}
		layers = append(layers, l)
		compressed, uncompressed = compressed+size, uncompressed+raw
	}
	_, err = pushImage(ref, v1.Config{Cmd: []string{"/bin/true"}}, layers...)
	return compressed, uncompressed, err
}

// knitPull opens a new image store at dst, as knit dev opens its own,
// and times Store.Pull with PullAlways and no credentials: what the
// first replica of a Revision waits for on a machine without the image.
func knitPull(ctx context.Context, ref, dst string) (time.Duration, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone() // what knit dev's store uses, without its connections
	defer tr.CloseIdleConnections()
	store, err := images.Open(ctx, images.Options{Root: dst, Transport: tr})
	if err != nil {
		return 0, err
	}
	defer store.Close()
	began := time.Now()
	_, err = store.Pull(ctx, ref, corev1.PullAlways, authn.NewMultiKeychain())
	return time.Since(began), err
}

// craneTarPull is `crane pull ref dst/img.tar`, in this process:
// cmd/crane needs github.com/spf13/cobra, which is not in go.sum, so the
// bench calls what its pull command calls (pkg/crane: the remote image,
// then crane.Save's tarball writer), with crane's default options.
func craneTarPull(ctx context.Context, ref, dst string) (time.Duration, error) {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return 0, err
	}
	tr := remote.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	began := time.Now()
	img, err := crane.Pull(ref, crane.WithContext(ctx), crane.WithTransport(tr))
	if err != nil {
		return 0, err
	}
	err = crane.Save(img, ref, filepath.Join(dst, "img.tar"))
	return time.Since(began), err
}

// craneOCIPull is `crane pull --format oci ref dst` the same way: an OCI
// image layout of the blobs as pulled.
func craneOCIPull(ctx context.Context, ref, dst string) (time.Duration, error) {
	tr := remote.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	began := time.Now()
	img, err := crane.Pull(ref, crane.WithContext(ctx), crane.WithTransport(tr))
	if err != nil {
		return 0, err
	}
	err = crane.SaveOCI(img, dst)
	return time.Since(began), err
}

// filesSize is the bytes in the regular files under dir.
func filesSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
