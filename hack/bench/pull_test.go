package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestPullMarkdown(t *testing.T) {
	ms := time.Millisecond
	p := &pullResult{
		layers: 5, compressed: 50 << 20, uncompressed: 51 << 20, push: 2 * time.Second,
		runs: []pullRun{
			{knit: 1000 * ms, craneTar: 400 * ms, craneOCI: 450 * ms},
			{knit: 1200 * ms, craneTar: 500 * ms, craneOCI: 300 * ms},
			{knit: 900 * ms, craneTar: 600 * ms, craneOCI: 500 * ms},
		},
		disk: pullRun64{knit: 50 << 20, craneTar: 50 << 20, craneOCI: 50<<20 + 1<<19},
	}
	md := p.markdown()
	for _, want := range []string{
		"\n" + pullHeading + "\n",
		"| 2 | 1200.0 ms | 500.0 ms | 300.0 ms |\n",
		"| **median** | **1000.0 ms** | **500.0 ms** | **450.0 ms** |\n",
		"| compressed layers moved | 50 MiB/s | 100 MiB/s | 111 MiB/s |\n",
		"| left on disk (bytes in files) | 50.0 MiB | 50.0 MiB | 50.5 MiB |\n",
		"knit's pull and unpack takes 2.00× crane's pull to a tarball.",
		"crane writes\nthe compressed blobs as they come and unpacks nothing",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
	skipped := (&pullResult{skipped: "not root"}).markdown()
	if want := "\n" + pullHeading + "\nNot measured: not root.\n"; skipped != want {
		t.Errorf("skipped section = %q; want %q", skipped, want)
	}
}

// The pull section sits between cold start and the cluster section, so
// a later run without the cluster part still finds the cluster section
// to carry over.
func TestPullSectionKeepsClusterCarried(t *testing.T) {
	r := benchReport()
	r.pull = &pullResult{skipped: "not root"}
	r.carriedCluster = "\n## On a real cluster\n\nnumbers\n"
	got := carriedCluster(r.markdown())
	if !strings.Contains(got, "numbers\n") || strings.Contains(got, "Image pull") || strings.Contains(got, "## Targets") {
		t.Errorf("carried cluster section = %q", got)
	}
}

// A seed makes the same files every time, another seed other ones, so
// the pull subject's layers are the same across runs and distinct from
// each other (equal layers would be pulled once).
func TestRandomLayersDeterministic(t *testing.T) {
	digest := func(seed byte) string {
		l, raw, err := layerOf(randomLayerFiles(seed, 3, 1000))
		if err != nil {
			t.Fatal(err)
		}
		if raw < 3000 {
			t.Errorf("tar stream of 3000 bytes of files is %d bytes", raw)
		}
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d.String()
	}
	if a, b := digest(1), digest(1); a != b {
		t.Errorf("seed 1 gave %s, then %s", a, b)
	}
	if a, b := digest(1), digest(2); a == b {
		t.Errorf("seeds 1 and 2 gave the same layer %s", a)
	}
}

// A layer lists each directory once, before what it holds, and the
// files in path order whatever order they came in.
func TestTarOf(t *testing.T) {
	raw, err := tarOf([]imageFile{
		{path: "etc/passwd", mode: 0o644, body: []byte("p")},
		{path: "ko-app/helloworld", mode: 0o755, body: []byte("bin")},
		{path: "etc/group", mode: 0o644, body: []byte("g")},
		{path: "a/b/c/d", mode: 0o644},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h.Name)
	}
	want := []string{"a/", "a/b/", "a/b/c/", "a/b/c/d", "etc/", "etc/group", "etc/passwd", "ko-app/", "ko-app/helloworld"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tar entries (-want +got):\n%s", diff)
	}
}

// The image Service is examples/helloworld's but for its name and
// image: the same scale bounds and environment.
func TestImageManifest(t *testing.T) {
	const ref = "127.0.0.1:5000/" + imageRepoTag
	m, err := imageManifest(filepath.Join("..", "..", helloManifest), ref)
	if err != nil {
		t.Fatal(err)
	}
	var got, orig map[string]any
	if err := yaml.Unmarshal(m, &got); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", helloManifest))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &orig); err != nil {
		t.Fatal(err)
	}
	orig["metadata"].(map[string]any)["name"] = imageService
	c := orig["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	if !strings.HasPrefix(c["image"].(string), "ko://") {
		t.Fatalf("examples/helloworld's image is %v, not ko://", c["image"])
	}
	c["image"] = ref
	if diff := cmp.Diff(orig, got); diff != "" {
		t.Errorf("image Service (-want +got):\n%s", diff)
	}
}

func TestBundlesLeft(t *testing.T) {
	state := t.TempDir()
	if n := bundlesLeft(state); n != 0 {
		t.Errorf("no containers dir: %d bundles", n)
	}
	for _, d := range []string{"containers/knit-0123456789abcdef", "containers/knit-fedcba9876543210", "containers/knit-5a5a5a5a5a5a5a5a"} {
		if err := os.MkdirAll(filepath.Join(state, d, "rootfs"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Two runs, each with its spec; the third bundle is a spare root
	// filesystem, which no run has taken.
	for _, d := range []string{"containers/knit-0123456789abcdef", "containers/knit-fedcba9876543210"} {
		if err := os.WriteFile(filepath.Join(state, d, "config.json"), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(state, "containers", ".lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if n := bundlesLeft(state); n != 2 {
		t.Errorf("%d bundles; want 2 (neither a file nor a spare is a run)", n)
	}
}
