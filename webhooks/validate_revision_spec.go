package webhooks

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// validateRevisionSpec is Knative's RevisionSpec.Validate: the pod part,
// then the serving knobs against the cluster's limits. path is the spec's.
func validateRevisionSpec(rs servingv1.RevisionSpec, path *field.Path, cfg Config) field.ErrorList {
	errs := validateContainers(rs.Containers, path, cfg.Features)
	errs = append(errs, validateInitContainers(rs.PodSpec, path, cfg.Features)...)
	errs = append(errs, validateVolumes(rs.PodSpec, path, cfg.Features)...)
	errs = append(errs, validatePodSecurityContext(rs.SecurityContext, path.Child("securityContext"), cfg.Features)...)
	errs = append(errs, validateGatedFields(rs.PodSpec, path, cfg.Features)...)
	if sa := rs.ServiceAccountName; sa != "" {
		// One error per complaint, as Knative: each its own details line.
		for _, msg := range validation.IsDNS1123Subdomain(sa) {
			errs = append(errs, field.Invalid(path.Child("serviceAccountName"), sa, msg))
		}
	}
	if t := rs.AutomountServiceAccountToken; t != nil && *t {
		errs = append(errs, field.Forbidden(path.Child("automountServiceAccountToken"), "may only be set to false"))
	}
	if cc := rs.ContainerConcurrency; cc != nil && (*cc < 0 || *cc > cfg.ContainerConcurrencyMaxLimit) {
		errs = append(errs, field.Invalid(path.Child("containerConcurrency"), *cc,
			fmt.Sprintf("must be between 0 and %d (config-defaults container-concurrency-max-limit); 0 means no limit", cfg.ContainerConcurrencyMaxLimit)))
	}
	maxTimeout := fmt.Sprintf("must be between 0 and %d (config-defaults max-revision-timeout-seconds)", cfg.MaxRevisionTimeoutSeconds)
	timeout := cfg.MaxRevisionTimeoutSeconds
	if t := rs.TimeoutSeconds; t != nil {
		if *t < 0 || *t > cfg.MaxRevisionTimeoutSeconds {
			errs = append(errs, field.Invalid(path.Child("timeoutSeconds"), *t, maxTimeout))
		} else if *t > 0 {
			timeout = *t
		}
	}
	if t := rs.ResponseStartTimeoutSeconds; t != nil && (*t < 0 || *t > timeout) {
		errs = append(errs, field.Invalid(path.Child("responseStartTimeoutSeconds"), *t,
			fmt.Sprintf("must be between 0 and %d, the request timeout (timeoutSeconds)", timeout)))
	}
	if t := rs.IdleTimeoutSeconds; t != nil && (*t < 0 || *t > cfg.MaxRevisionTimeoutSeconds) {
		errs = append(errs, field.Invalid(path.Child("idleTimeoutSeconds"), *t, maxTimeout))
	}
	return errs
}
