//go:build !unit

package e2e

import (
	"os"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/knitops/knit/internal/testregistry"
)

// busyboxImage is a busybox image in a registry on loopback that serves
// for the test: what docker.io/library/busybox is, without the Internet.
// Images run in knit dev as root only.
func busyboxImage(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: knit dev runs images with runc, in namespaces and cgroups")
	}
	ref := testregistry.Start(t, false) + "/library/busybox:1"
	testregistry.Push(t, ref, v1.Config{Cmd: []string{"sh"}, Env: []string{"PATH=/bin"}}, testregistry.WithBusybox(map[string]testregistry.File{}))
	return ref
}
