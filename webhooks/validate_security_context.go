package webhooks

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/knitops/knit/config"
)

// The fields of a container's securityContext Knative lets a Revision set
// (its SecurityContextMask): privileged, seLinuxOptions, procMount,
// windowsOptions, appArmorProfile and anything newer are refused, so a
// Revision cannot ask for more than its platform grants by default.
var securityContextFields = []string{
	"capabilities", "readOnlyRootFilesystem", "runAsUser", "runAsGroup", "runAsNonRoot",
	"allowPrivilegeEscalation", "seccompProfile",
}

// The fields of the pod's securityContext a Revision may set with
// config-features kubernetes.podspec-securitycontext on (Knative's
// PodSecurityContextMask). seLinuxOptions, windowsOptions, sysctls,
// fsGroupChangePolicy and the rest are refused even then.
var podSecurityContextFields = []string{
	"runAsUser", "runAsGroup", "runAsNonRoot", "fsGroup", "supplementalGroups", "seccompProfile",
}

// Knative's bounds for user and group IDs: a Linux ID Kubernetes accepts
// that is not negative.
const minID, maxID = 0, math.MaxInt32

// validateSecurityContext is Knative's validateSecurityContext for a
// container's at path: Knative's fields alone, capabilities that only
// drop unless kubernetes.containerspec-addcapabilities is Enabled (under
// secure-pod-defaults, NET_BIND_SERVICE alone may be added back), IDs in
// bounds.
func validateSecurityContext(sc *corev1.SecurityContext, path *field.Path, features config.Features) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	for _, f := range disallowedFields(*sc, securityContextFields...) {
		errs = append(errs, field.Forbidden(path.Child(f), "must not set the field(s)"))
	}
	if c := sc.Capabilities; c != nil {
		allowed := []string{"drop"}
		switch {
		case features.ContainerSpecAddCapabilities == config.FeatureEnabled:
			allowed = append(allowed, "add")
		case features.SecurePodDefaults == config.FeatureEnabled && len(c.Add) == 1 && c.Add[0] == netBindService:
			allowed = append(allowed, "add")
		}
		for _, f := range disallowedFields(*c, allowed...) {
			msg := "must not set the field(s)"
			if f == "add" {
				msg = flagOff("kubernetes.containerspec-addcapabilities")
			}
			errs = append(errs, field.Forbidden(path.Child("capabilities", f), msg))
		}
	}
	errs = append(errs, idInBounds(sc.RunAsUser, path.Child("runAsUser"))...)
	errs = append(errs, idInBounds(sc.RunAsGroup, path.Child("runAsGroup"))...)
	return errs
}

// validatePodSecurityContext is Knative's ValidatePodSecurityContext for
// the pod's at path. With kubernetes.podspec-securitycontext off the pod
// may set nothing there, except, under secure-pod-defaults, a
// seccompProfile of RuntimeDefault or Unconfined: the way to opt a whole
// pod out of (or back into) the default that flag applies.
func validatePodSecurityContext(sc *corev1.PodSecurityContext, path *field.Path, features config.Features) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	allowed := podSecurityContextFields
	msg := "must not set the field(s)"
	if !features.PodSpecSecurityContext.On() {
		allowed, msg = nil, flagOff("kubernetes.podspec-securitycontext")
		if features.SecurePodDefaults == config.FeatureEnabled && seccompOptOut(sc.SeccompProfile) {
			allowed = []string{"seccompProfile"}
		}
	}
	for _, f := range disallowedFields(*sc, allowed...) {
		errs = append(errs, field.Forbidden(path.Child(f), msg))
	}
	errs = append(errs, idInBounds(sc.RunAsUser, path.Child("runAsUser"))...)
	errs = append(errs, idInBounds(sc.RunAsGroup, path.Child("runAsGroup"))...)
	errs = append(errs, idInBounds(sc.FSGroup, path.Child("fsGroup"))...)
	for i := range sc.SupplementalGroups {
		errs = append(errs, idInBounds(&sc.SupplementalGroups[i], path.Child("supplementalGroups").Index(i))...)
	}
	return errs
}

// seccompOptOut reports whether p is a profile secure-pod-defaults lets a
// pod name without kubernetes.podspec-securitycontext: the runtime's
// default, or none.
func seccompOptOut(p *corev1.SeccompProfile) bool {
	return p != nil && (p.Type == corev1.SeccompProfileTypeRuntimeDefault || p.Type == corev1.SeccompProfileTypeUnconfined) && p.LocalhostProfile == nil
}

// idInBounds is Knative's apis.ErrOutOfBoundsValue for an ID. It is a
// Forbidden error because Knative's message for it is the bare sentence,
// "expected 0 <= -10 <= 2147483647: <path>", which is how knativeError
// words a Forbidden one (an Invalid one would read "invalid value: …").
func idInBounds(id *int64, path *field.Path) field.ErrorList {
	if id == nil || (*id >= minID && *id <= maxID) {
		return nil
	}
	return field.ErrorList{field.Forbidden(path, fmt.Sprintf("expected %d <= %d <= %d", minID, *id, maxID))}
}
