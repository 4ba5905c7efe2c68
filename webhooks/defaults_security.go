package webhooks

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

// netBindService is the one capability a container may add back under
// secure-pod-defaults: binding a port below 1024.
const netBindService corev1.Capability = "NET_BIND_SERVICE"

// defaultSecureContexts is Knative's secure-pod-defaults: with the flag
// Enabled, each container gets what the restricted Pod Security level
// asks for wherever the Revision leaves it unset, so a namespace that
// enforces that level admits Knative's pods without every manifest
// spelling it out: allowPrivilegeEscalation false, seccomp RuntimeDefault
// (unless the pod sets a profile), every capability dropped (then
// NET_BIND_SERVICE added for a container that declares a port below
// 1024), and runAsNonRoot (unless the pod says). What a Revision sets is
// kept, so an app can still opt out field by field.
func defaultSecureContexts(rs *servingv1.RevisionSpec, features config.Features) {
	if features.SecurePodDefaults != config.FeatureEnabled {
		return
	}
	psc := rs.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	for i := range rs.Containers {
		defaultSecureContext(psc, &rs.Containers[i])
	}
	for i := range rs.InitContainers {
		defaultSecureContext(psc, &rs.InitContainers[i])
	}
}

func defaultSecureContext(psc *corev1.PodSecurityContext, c *corev1.Container) {
	sc := c.SecurityContext
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	if sc.AllowPrivilegeEscalation == nil {
		sc.AllowPrivilegeEscalation = ptr.To(false)
	}
	if (psc.SeccompProfile == nil || psc.SeccompProfile.Type == "") && (sc.SeccompProfile == nil || sc.SeccompProfile.Type == "") {
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	if sc.Capabilities == nil {
		sc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
		for _, p := range c.Ports {
			if p.ContainerPort < 1024 {
				sc.Capabilities.Add = []corev1.Capability{netBindService}
				break
			}
		}
	}
	if psc.RunAsNonRoot == nil && sc.RunAsNonRoot == nil {
		sc.RunAsNonRoot = ptr.To(true)
	}
	c.SecurityContext = sc
}
