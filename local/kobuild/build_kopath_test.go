package kobuild

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
)

// A ko:// image that is a flag, a pattern or a path out of the module is
// refused before any go command runs.
func TestBuildRefusesFlagLikeImages(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "go-ran")
	fakeGo := filepath.Join(dir, "go")
	if err := os.WriteFile(fakeGo, []byte("#!/bin/sh\necho \"$@\" >> "+ran+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := New(ctx, fakeGo, dir, filepath.Join(dir, "builds"), logr.Discard())
	for image, want := range map[string]string{
		"ko://-toolexec=/bin/sh": "starts with '-'",
		"ko://./...":             "only dots",
		"ko://../elsewhere/cmd":  "only dots",
		"ko://all":               "pattern names",
	} {
		_, err := b.Build(ctx, image)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "go build "+image+": ") {
			t.Errorf("Build(%s) = %v, want a build error saying %q", image, err, want)
		}
	}
	if out, err := os.ReadFile(ran); err == nil {
		t.Errorf("go ran for a refused image: %s", out)
	}
}
