//go:build !unit

package dev

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/gitsync/build"
	"github.com/knitops/knit/local/controlplane"
)

// TestBuildPodsOnARealAPIServer: the API server takes a build's mirror
// pod as knit dev makes it (bound to the node, its image a description),
// its status as the build goes, and its deletion at once when collected.
func TestBuildPodsOnARealAPIServer(t *testing.T) {
	bin := os.Getenv("KUBEBUILDER_ASSETS")
	if bin == "" {
		t.Fatal("KUBEBUILDER_ASSETS is unset: run `make tools` and `KUBEBUILDER_ASSETS=$PWD/bin go test`, or `go test -tags unit` for the unit tests alone")
	}
	ctx := log.IntoContext(context.Background(), testr.New(t))
	cp, err := controlplane.Start(ctx, controlplane.Options{StateDir: t.TempDir(), BinDir: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	c, err := client.New(cp.RESTConfig(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.SystemNamespace}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := newBuildPods(c, "this-machine", func(key string) string { return filepath.Join(dir, key[:16]+".log") }, logr.Discard())
	r := build.Request{Namespace: "team", Repository: "app", Image: "dockerfile://./web", Commit: "abc1234"}
	key := testKey

	p.started(ctx, key, r)
	pod := &corev1.Pod{}
	name := client.ObjectKey{Namespace: config.SystemNamespace, Name: build.JobName(key)}
	if err := c.Get(ctx, name, pod); err != nil || pod.Status.Phase != corev1.PodRunning || pod.Spec.NodeName != "this-machine" {
		t.Fatalf("while building: %v, %+v", err, pod.Status)
	}
	p.finished(ctx, key, r, time.Now(), errors.New("RUN make: exit code 2"))
	if err := c.Get(ctx, name, pod); err != nil || pod.Status.Phase != corev1.PodFailed {
		t.Fatalf("after a failed build: %v, %+v", err, pod.Status)
	}

	// Run again (a failed key's next build): the pod is made afresh.
	p.started(ctx, key, r)
	again := &corev1.Pod{}
	if err := c.Get(ctx, name, again); err != nil || again.UID == pod.UID || again.Status.Phase != corev1.PodRunning {
		t.Fatalf("a rerun's pod: %v, %+v", err, again.Status)
	}
	// An earlier knit dev's build, Running with no build behind it, goes.
	p.live = map[string]chan struct{}{}
	p.collect(ctx)
	if err := c.Get(ctx, name, again); !apierrors.IsNotFound(err) {
		t.Errorf("an orphaned build pod after collect: %v, want it deleted at once", err)
	}
}
