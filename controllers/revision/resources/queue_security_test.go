package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The queue-proxy must run in a namespace enforcing the restricted Pod
// Security Standard, as Knative's does: non-root, no privilege
// escalation, read-only root, every capability dropped, the runtime's
// seccomp profile. knit dev's knit://queue is knit's own process, with no
// image USER to be non-root by, so runAsNonRoot is left to the host there.
func TestQueueContainerSecurityContext(t *testing.T) {
	restricted := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	local := restricted.DeepCopy()
	local.RunAsNonRoot = nil
	for _, tc := range []struct {
		image string
		want  *corev1.SecurityContext
	}{
		{image: "ghcr.io/knitops/knit-queue:v1", want: restricted},
		{image: "registry.local/knit-queue@sha256:0123", want: restricted},
		{image: "knit://queue", want: local},
	} {
		t.Run(tc.image, func(t *testing.T) {
			d := MakeDeployment(testRevision(), DeploymentConfig{QueueImage: tc.image})
			q := d.Spec.Template.Spec.Containers[len(d.Spec.Template.Spec.Containers)-1]
			if diff := cmp.Diff(tc.want, q.SecurityContext); diff != "" {
				t.Errorf("queue-proxy securityContext (-want +got):\n%s", diff)
			}
			if app := d.Spec.Template.Spec.Containers[0]; app.SecurityContext != nil {
				t.Errorf("app securityContext = %+v, want the Revision's own (none)", app.SecurityContext)
			}
		})
	}
}
