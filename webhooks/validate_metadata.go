package webhooks

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/knitops/knit/api/autoscaling"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

// clusterLocal is the one value of networking.knative.dev/visibility.
const clusterLocal = "cluster-local"

// validateNoAutoscalingAnnotations refuses autoscaling annotations on a
// Service, Configuration or Route itself, where Knative ignores them: they
// only work on the Revision template. path is the annotations'.
func validateNoAutoscalingAnnotations(anns map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, key := range slices.Sorted(maps.Keys(anns)) {
		if strings.HasPrefix(key, autoscaling.Prefix) {
			errs = append(errs, field.Forbidden(path.Key(key),
				`autoscaling annotations must be put under "spec.template.metadata.annotations" to work`))
		}
	}
	return errs
}

// validateVisibility checks networking.knative.dev/visibility, which only
// knows cluster-local. path is the labels'.
func validateVisibility(labels map[string]string, path *field.Path) field.ErrorList {
	if v, ok := labels[servingv1.VisibilityLabelKey]; ok && v != clusterLocal {
		return field.ErrorList{field.NotSupported(path.Key(servingv1.VisibilityLabelKey), v, []string{clusterLocal})}
	}
	return nil
}

// validateHTTPProtocol checks the http-protocol annotations of a Route or
// Service, which Knative reads when it reconciles and refuses there: here
// the refusal comes at apply, before the Route stops being routed. path is
// the annotations'.
func validateHTTPProtocol(anns map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, key := range []string{config.HTTPOptionAnnotation, config.HTTPProtocolAnnotation} {
		v, ok := anns[key]
		if !ok {
			continue
		}
		if _, err := (&config.Network{}).RouteHTTPProtocol(map[string]string{key: v}); err != nil {
			errs = append(errs, field.NotSupported(path.Key(key), v, []string{"Enabled", "Redirected"}))
		}
	}
	return errs
}

// validateRolloutDuration refuses a rollout-duration annotation the Route
// controller could not read, as Knative's admission does: not a
// duration (or knit's bare seconds), negative, or finer than a second.
func validateRolloutDuration(anns map[string]string, path *field.Path) field.ErrorList {
	v, ok := anns[config.RolloutDurationAnnotation]
	if !ok {
		return nil
	}
	if _, err := config.ParseRolloutDuration(v); err != nil {
		return field.ErrorList{field.Invalid(path.Key(config.RolloutDurationAnnotation), v, err.Error())}
	}
	return nil
}
