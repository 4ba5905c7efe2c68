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

// The fields of the pod's securityContext knit accepts: those Knative
// accepts with its kubernetes.podspec-securitycontext feature on, which
// knit's PodSpec always is (PodSecurityContextMask). seLinuxOptions,
// windowsOptions, sysctls, fsGroupChangePolicy and the rest are refused.
var podSecurityContextFields = []string{
	"runAsUser", "runAsGroup", "runAsNonRoot", "fsGroup", "supplementalGroups", "seccompProfile",
}

// Knative's bounds for user and group IDs: a Linux ID Kubernetes accepts
// that is not negative.
const minID, maxID = 0, math.MaxInt32

// validateSecurityContext is Knative's validateSecurityContext for a
// container's at path: Knative's fields alone, capabilities that only
// drop (adding one is a feature Knative leaves off; under
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
		if features.SecurePodDefaults == config.FeatureEnabled && len(c.Add) == 1 && c.Add[0] == netBindService {
			allowed = append(allowed, "add")
		}
		for _, f := range disallowedFields(*c, allowed...) {
			errs = append(errs, field.Forbidden(path.Child("capabilities", f), "must not set the field(s)"))
		}
	}
	errs = append(errs, idInBounds(sc.RunAsUser, path.Child("runAsUser"))...)
	errs = append(errs, idInBounds(sc.RunAsGroup, path.Child("runAsGroup"))...)
	return errs
}

// validatePodSecurityContext is Knative's ValidatePodSecurityContext for
// the pod's at path.
func validatePodSecurityContext(sc *corev1.PodSecurityContext, path *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	for _, f := range disallowedFields(*sc, podSecurityContextFields...) {
		errs = append(errs, field.Forbidden(path.Child(f), "must not set the field(s)"))
	}
	errs = append(errs, idInBounds(sc.RunAsUser, path.Child("runAsUser"))...)
	errs = append(errs, idInBounds(sc.RunAsGroup, path.Child("runAsGroup"))...)
	errs = append(errs, idInBounds(sc.FSGroup, path.Child("fsGroup"))...)
	for i := range sc.SupplementalGroups {
		errs = append(errs, idInBounds(&sc.SupplementalGroups[i], path.Child("supplementalGroups").Index(i))...)
	}
	return errs
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
