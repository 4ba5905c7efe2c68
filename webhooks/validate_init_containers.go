package webhooks

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

// validateInitContainers is Knative's validateInitContainers: refused
// while kubernetes.podspec-init-containers is not Enabled; otherwise each
// is checked as a container, with a name no other container of the pod
// has, and no probes or lifecycle (Kubernetes refuses those on an init
// container; saying so here beats a Deployment that never makes a pod).
// path is the pod spec's.
func validateInitContainers(ps servingv1.PodSpec, path *field.Path, features config.Features) field.ErrorList {
	ics := ps.InitContainers
	if len(ics) == 0 {
		return nil
	}
	ip := path.Child("initContainers")
	if features.PodSpecInitContainers != config.FeatureEnabled {
		return field.ErrorList{field.Forbidden(ip, fmt.Sprintf(
			"pod spec support for init-containers is off, but found %d init containers (config-features kubernetes.podspec-init-containers)", len(ics)))}
	}
	names := map[string]bool{}
	for _, c := range ps.Containers {
		names[c.Name] = true
	}
	var errs field.ErrorList
	for i, c := range ics {
		p := ip.Index(i)
		switch {
		case names[c.Name]:
			errs = append(errs, field.Invalid(p.Child("name"), c.Name, fmt.Sprintf("duplicate container name %q", c.Name)))
		case c.Name == reservedContainerName:
			errs = append(errs, field.Invalid(p.Child("name"), c.Name, "is reserved for knit's queue-proxy"))
		}
		names[c.Name] = true
		if c.LivenessProbe != nil {
			errs = append(errs, field.Forbidden(p.Child("livenessProbe"), "field not allowed in an init container"))
		}
		if c.ReadinessProbe != nil {
			errs = append(errs, field.Forbidden(p.Child("readinessProbe"), "field not allowed in an init container"))
		}
		errs = append(errs, validateContainer(c, p, false, features)...)
	}
	return errs
}
