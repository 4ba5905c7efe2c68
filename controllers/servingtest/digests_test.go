//go:build !unit

package servingtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
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
