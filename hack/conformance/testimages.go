package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// testImagesDir is where knit dev's ko:// images of the suite are: a link
// per test image, named as the suite names it, to its package in the
// pinned release. The suite names an image by its last path element
// ({{.Name}}), and two live one level deeper
// (multicontainer/servingcontainer, multicontainer/sidecarcontainer), so
// no single prefix of Knative's own paths reaches them all. Not in Git.
const testImagesDir = "testimages"

// testImagesPackage is the import path testImagesDir's links have.
const testImagesPackage = "github.com/knitops/knit/hack/conformance/" + testImagesDir

// linkTestImages makes testImagesDir in dir (this module's directory).
func linkTestImages(ctx context.Context, dir string) error {
	out, err := exec.CommandContext(ctx, "go", "list", "-f", `{{if eq .Name "main"}}{{.Dir}}{{end}}`, "knative.dev/serving/test/test_images/...").Output()
	if err != nil {
		return fmt.Errorf("go list the test images: %w", err)
	}
	links := filepath.Join(dir, testImagesDir)
	if err := os.RemoveAll(links); err != nil {
		return err
	}
	if err := os.MkdirAll(links, 0o755); err != nil {
		return err
	}
	for _, pkgDir := range strings.Fields(string(out)) {
		if err := os.Symlink(pkgDir, filepath.Join(links, filepath.Base(pkgDir))); err != nil {
			return err
		}
	}
	return nil
}
