package config

import (
	"fmt"
	"strings"
)

// FeaturesConfigName is Knative's config-features, whose flags gate the
// parts of a pod a Revision may set.
const FeaturesConfigName = "config-features"

// Feature is one config-features flag, with Knative's values.
type Feature string

// Knative's flag values. For the pod-spec flags Enabled and Allowed mean
// the same: a Revision may set the field.
const (
	FeatureEnabled  Feature = "Enabled"
	FeatureAllowed  Feature = "Allowed"
	FeatureDisabled Feature = "Disabled"
)

// On reports whether f lets a Revision use the feature. The zero Feature
// is off, so a Features nobody parsed gates everything.
func (f Feature) On() bool { return f == FeatureEnabled || f == FeatureAllowed }

// Features is config-features: the scheduling fields of a pod a Revision
// may set, and whether admission defaults pods to secure settings. They are off by default, as in Knative, because they are the
// cluster operator's business: a tolerations entry lets an app onto nodes
// tainted for other tenants or for the control plane, a nodeSelector pins
// it to nodes of the operator's choosing, a runtimeClassName picks a
// sandbox (or none). Admission refuses each unless its flag is on.
type Features struct {
	// PodSpecNodeSelector is kubernetes.podspec-nodeselector.
	PodSpecNodeSelector Feature
	// PodSpecTolerations is kubernetes.podspec-tolerations.
	PodSpecTolerations Feature
	// PodSpecRuntimeClassName is kubernetes.podspec-runtimeclassname.
	PodSpecRuntimeClassName Feature
	// SecurePodDefaults is secure-pod-defaults: Enabled makes admission
	// default every container to the restricted Pod Security level
	// (allowPrivilegeEscalation false, capabilities dropped, seccomp
	// RuntimeDefault, runAsNonRoot) where the Revision leaves it unset,
	// and lets a container add NET_BIND_SERVICE back.
	SecurePodDefaults Feature
}

// ParseFeatures reads config-features with Knative's defaults (every
// pod-spec flag Disabled). Knative's flags for fields knit's Revisions do
// not have (affinity, hostAliases, dnsPolicy, …) are ignored: knit's
// PodSpec has no such fields, so no pod ever gets them. Values are Knative's, in any case; anything
// else is an error, so a typo does not silently leave a field gated.
func ParseFeatures(data map[string]string) (*Features, error) {
	f := &Features{
		PodSpecNodeSelector:     FeatureDisabled,
		PodSpecTolerations:      FeatureDisabled,
		PodSpecRuntimeClassName: FeatureDisabled,
		SecurePodDefaults:       FeatureDisabled,
	}
	p := parser{cm: FeaturesConfigName, data: data}
	p.feature("kubernetes.podspec-nodeselector", &f.PodSpecNodeSelector)
	p.feature("kubernetes.podspec-tolerations", &f.PodSpecTolerations)
	p.feature("kubernetes.podspec-runtimeclassname", &f.PodSpecRuntimeClassName)
	p.feature("secure-pod-defaults", &f.SecurePodDefaults)
	if p.err != nil {
		return nil, p.err
	}
	return f, nil
}

func (p *parser) feature(key string, dst *Feature) {
	v, ok := p.data[key]
	if !ok || strings.TrimSpace(v) == "" {
		return
	}
	for _, f := range []Feature{FeatureEnabled, FeatureAllowed, FeatureDisabled} {
		if strings.EqualFold(strings.TrimSpace(v), string(f)) {
			*dst = f
			return
		}
	}
	p.fail(key, v, fmt.Sprintf("want %s, %s or %s", FeatureEnabled, FeatureAllowed, FeatureDisabled))
}
