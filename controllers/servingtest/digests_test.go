//go:build !unit

package servingtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/names"
	"github.com/knitops/knit/internal/testregistry"
)

// On a cluster the kubelet reports the digest each container runs; the
// Revision records it in status.containerStatuses, which Knative's
// conformance suite checks against the image. Here a pod of the Revision
// plays the kubelet's report.
func TestRevisionRecordsImageDigests(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	if err := k8s.Create(ctx, helloService(ns, "hello", "World")); err != nil {
		t.Fatal(err)
	}
	runReplicas(t, ns, "hello-00001", 41951)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello-00001-deployment-abc", Labels: map[string]string{servingv1.RevisionLabelKey: "hello-00001"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "user-container", Image: "example.com/hello"}, {Name: "queue-proxy", Image: "example.com/queue"}}},
	}
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	const digest = "example.com/hello@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{
		{Name: "user-container", Image: "example.com/hello", ImageID: "docker-pullable://" + digest},
		{Name: "queue-proxy", Image: "example.com/queue", ImageID: "example.com/queue@sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"},
	}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	want := []servingv1.ContainerStatus{{Name: "user-container", ImageDigest: digest}}
	eventually(t, "Revision's containerStatuses", func(ctx context.Context) (bool, string) {
		rev := &servingv1.Revision{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-00001"}, rev); err != nil {
			return false, err.Error()
		}
		diff := cmp.Diff(want, rev.Status.ContainerStatuses)
		return diff == "", fmt.Sprintf("(-want +got):\n%s", diff)
	})
}

// A Revision whose image is a tag runs the digest the tag named when the
// Revision was made, resolved with its ServiceAccount's pull secret: its
// Deployment names the digest, so pushing the tag again changes nothing
// it runs, and only the next Revision picks the new push up.
func TestRevisionPinsItsTagToADigest(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	reg := testregistry.Start(t, true)
	image := reg + "/team/app:1.0"
	first := reg + "/team/app@" + testregistry.Push(t, image, v1.Config{}, map[string]testregistry.File{"v": {Content: "1"}})
	for _, o := range []client.Object{
		testregistry.PullSecret(ns, "regcred", reg, testregistry.User, testregistry.Password),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "puller"},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}}},
	} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	svc := helloService(ns, "app", "one")
	svc.Spec.Template.Spec.ServiceAccountName = "puller"
	svc.Spec.Template.Spec.Containers[0].Image = image
	if err := k8s.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	waitForPin(t, ns, "app-00001", first)

	second := reg + "/team/app@" + testregistry.Push(t, image, v1.Config{}, map[string]testregistry.File{"v": {Content: "2"}})
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
			return err
		}
		svc.Spec.Template.Spec.Containers[0].Env[0].Value = "two"
		return k8s.Update(ctx, svc)
	}); err != nil {
		t.Fatal(err)
	}
	waitForPin(t, ns, "app-00002", second)
	waitForPin(t, ns, "app-00001", first)
}

// waitForPin waits until Revision rev records digest and its Deployment
// runs it.
func waitForPin(t *testing.T, ns, rev, digest string) {
	t.Helper()
	eventually(t, rev+" pinned to "+digest, func(ctx context.Context) (bool, string) {
		r := &servingv1.Revision{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: rev}, r); err != nil {
			return false, err.Error()
		}
		want := []servingv1.ContainerStatus{{Name: "user-container", ImageDigest: digest}}
		if diff := cmp.Diff(want, r.Status.ContainerStatuses); diff != "" {
			return false, fmt.Sprintf("containerStatuses (-want +got):\n%s", diff)
		}
		dep := &appsv1.Deployment{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.Deployment(rev)}, dep); err != nil {
			return false, err.Error()
		}
		got := dep.Spec.Template.Spec.Containers[0].Image
		return got == digest, "the Deployment runs " + got
	})
}

// A tag the registry does not have fails the Revision with Knative's
// ContainerMissing and the registry's word, and makes no Deployment; the
// Service's traffic stays where it was.
func TestRevisionWithAMissingImageIsContainerMissing(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	reg := testregistry.Start(t, false)
	testregistry.Push(t, reg+"/team/app:1.0", v1.Config{}, map[string]testregistry.File{"v": {Content: "1"}})
	svc := helloService(ns, "app", "one")
	svc.Spec.Template.Spec.Containers[0].Image = reg + "/team/app:never-pushed"
	if err := k8s.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Revision ContainerMissing", func(ctx context.Context) (bool, string) {
		r := &servingv1.Revision{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-00001"}, r); err != nil {
			return false, err.Error()
		}
		c := r.Status.GetCondition(servingv1.RevisionConditionContainerHealthy)
		ready := r.Status.GetCondition(duckv1.ConditionReady)
		if c == nil || ready == nil {
			return false, "no conditions yet"
		}
		ok := c.Status == corev1.ConditionFalse && c.Reason == servingv1.ReasonContainerMissing &&
			strings.Contains(c.Message, "MANIFEST_UNKNOWN") && ready.Status == corev1.ConditionFalse
		return ok, fmt.Sprintf("ContainerHealthy %s %s %q, Ready %s", c.Status, c.Reason, c.Message, ready.Status)
	})
	dep := &appsv1.Deployment{}
	err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.Deployment("app-00001")}, dep)
	if !apierrors.IsNotFound(err) {
		t.Errorf("a Revision whose image is missing has a Deployment (%v)", err)
	}
}
