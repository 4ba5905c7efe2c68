//go:build !unit

package runtime

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A replica stopped while knit dev runs gets its pod's whole
// terminationGracePeriodSeconds, as on a kubelet, even beyond knit dev's
// shutdown bound (5 s in this suite): an app that ignores SIGTERM is still
// running after that bound, and killed once its own period ends.
func TestStopHonoursTheWholeGracePeriod(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	app := appContainer("knit://serve")
	app.Env = append(app.Env, corev1.EnvVar{Name: "IGNORE_SIGTERM", Value: "1"})
	d := revisionDeployment(ns, "slow-stop", 1, app)
	const grace = 8 * time.Second
	d.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To(int64(grace / time.Second))
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	waitForDeployment(t, key, 30*time.Second, "available", available)
	pids := replicaPIDs(key)
	if len(pids) != 1 {
		t.Fatalf("pids = %v, want 1", pids)
	}

	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To[int32](0)
	if err := suite.client.Patch(ctx, d, patch); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	waitForDeployment(t, key, 30*time.Second, "scaled to zero", func(d *appsv1.Deployment) bool { return d.Status.Replicas == 0 })
	time.Sleep(time.Until(stopped.Add(suite.rt.opts.ShutdownGracePeriod + time.Second)))
	if err := syscall.Kill(pids[0], 0); err != nil {
		t.Fatalf("the app was gone %s after its stop (%v), before its %s grace period ended", time.Since(stopped).Round(time.Millisecond), err, grace)
	}
	eventually(t, 30*time.Second, "the app killed after its grace period", func() (bool, string) {
		err := syscall.Kill(pids[0], 0)
		return errors.Is(err, syscall.ESRCH), fmt.Sprintf("kill -0: %v after %s", err, time.Since(stopped).Round(time.Millisecond))
	})
	if took := time.Since(stopped); took < grace {
		t.Errorf("killed after %s, before its grace period of %s", took, grace)
	}
}
