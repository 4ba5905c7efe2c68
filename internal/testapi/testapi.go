// Package testapi starts a real kube-apiserver and etcd (controller-runtime's
// envtest, the binaries `make tools` builds into ./bin) for a package's
// tests, so each suite does not repeat the checks and the start.
package testapi

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ErrNoAssets is Start without KUBEBUILDER_ASSETS: a test that needs an
// API server fails rather than skips (`go test -tags unit` leaves such
// tests out instead).
var ErrNoAssets = errors.New("KUBEBUILDER_ASSETS is not set: run through `make test`, which builds kube-apiserver and etcd into ./bin")

// Start runs an API server with the CRDs of crdDirs installed (none: the
// built-in kinds only) and returns its config and how to stop it.
func Start(crdDirs ...string) (*rest.Config, func(), error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, nil, ErrNoAssets
	}
	env := &envtest.Environment{CRDDirectoryPaths: crdDirs, ErrorIfCRDPathMissing: len(crdDirs) > 0}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("start envtest: %w", err)
	}
	return cfg, func() { _ = env.Stop() }, nil
}

// StartT is Start for one test: it fails t, and stops the API server when
// t ends.
func StartT(t testing.TB, crdDirs ...string) *rest.Config {
	t.Helper()
	cfg, stop, err := Start(crdDirs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return cfg
}
