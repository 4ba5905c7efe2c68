package dev

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knitops/knit/gitsync/build"
	"github.com/knitops/knit/local/buildkit"
)

func TestParseMirrors(t *testing.T) {
	got, err := parseMirrors([]string{"docker.io=127.0.0.1:5000", "ghcr.io=127.0.0.1:5001,mirror.example:443", "docker.io=127.0.0.1:5002"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"docker.io": {"127.0.0.1:5000", "127.0.0.1:5002"}, "ghcr.io": {"127.0.0.1:5001", "mirror.example:443"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseMirrors (-want +got):\n%s", diff)
	}
	// Each value lands in buildkitd.toml: nothing that could end a string.
	for _, bad := range []string{"docker.io", "=127.0.0.1:5000", "docker.io=", `docker.io=a"b`, "docker.io=a\nb", `docker.io=a\b`, "docker.io=a b"} {
		if _, err := parseMirrors([]string{bad}); err == nil || !strings.Contains(err.Error(), "--build-mirror") {
			t.Errorf("parseMirrors(%q) = %v, want an error naming the flag", bad, err)
		}
	}
}

func TestDurations(t *testing.T) {
	res := buildkit.Result{Steps: []buildkit.Step{{Name: "[1/2] FROM x", Duration: "0.1s"}, {Name: "exporting to image", Duration: "0.3s"}}}
	if got, want := durations(1234*time.Millisecond, res), "build=1.2s push=0.3s"; got != want {
		t.Errorf("durations = %q, want %q", got, want)
	}
	if got, want := durations(time.Second, buildkit.Result{}), "build=1s"; got != want {
		t.Errorf("durations of a build that pushed nothing = %q, want %q", got, want)
	}
}

// Two spellings of one build share a key; another namespace, tree or
// setting does not.
func TestDockerfileBuildKey(t *testing.T) {
	b := &dockerfileBuilds{}
	base := build.Request{Namespace: "default", Tree: "t1", Image: "dockerfile://./web?build-arg=A=1&target=run"}
	key := b.Key(base)
	same := base
	same.Image = "dockerfile://./web?target=run&build-arg=A=1&file=Dockerfile"
	if b.Key(same) != key {
		t.Error("two spellings of one build have different keys")
	}
	for name, change := range map[string]func(*build.Request){
		"namespace": func(r *build.Request) { r.Namespace = "other" },
		"tree":      func(r *build.Request) { r.Tree = "t2" },
		"target":    func(r *build.Request) { r.Image = "dockerfile://./web?build-arg=A=1&target=test" },
		"arg":       func(r *build.Request) { r.Image = "dockerfile://./web?build-arg=A=2&target=run" },
		"directory": func(r *build.Request) { r.Image = "dockerfile://./api?build-arg=A=1&target=run" },
	} {
		r := base
		change(&r)
		if b.Key(r) == key {
			t.Errorf("a different %s has the same key", name)
		}
	}
}
