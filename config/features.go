package config

import (
	"fmt"
	"strings"
)

// FeaturesConfigName is Knative's config-features, whose flags gate the
// parts of a pod a Revision may set and a few optional behaviours.
const FeaturesConfigName = "config-features"

// Feature is one config-features flag, with Knative's values.
type Feature string

// Knative's flag values. For the pod-spec flags Enabled and Allowed mean
// the same: a Revision may set the field. For the behaviours a Revision
// opts into (podspec-dryrun, queueproxy.mount-podinfo) Allowed means "only
// when the Service carries the flag's features.knative.dev annotation".
const (
	FeatureEnabled  Feature = "Enabled"
	FeatureAllowed  Feature = "Allowed"
	FeatureDisabled Feature = "Disabled"
)

// On reports whether f lets a Revision use the feature. The zero Feature
// is off, so a Features nobody parsed gates everything.
func (f Feature) On() bool { return f == FeatureEnabled || f == FeatureAllowed }

// Features is config-features, every flag Knative Serving 1.15 has, with
// Knative's meaning. The pod-spec flags are off by default, as in
// Knative, because they are the cluster operator's business: a toleration
// lets an app onto nodes tainted for other tenants or for the control
// plane, a nodeSelector or affinity pins it to nodes of the operator's
// choosing, a runtime class picks a sandbox (or none), a writable claim
// outlives the Revision that wrote it. Admission refuses each field unless
// its flag is on; docs/conformance.md says what each flag does in knit.
type Features struct {
	// MultiContainer is multi-container: several containers per Revision.
	MultiContainer Feature
	// MultiContainerProbing is multi-container-probing: readiness and
	// liveness probes on containers that do not serve, whose readiness
	// then counts toward the replica's.
	MultiContainerProbing Feature

	PodSpecAffinity                  Feature // kubernetes.podspec-affinity
	PodSpecTopologySpreadConstraints Feature // kubernetes.podspec-topologyspreadconstraints
	PodSpecHostAliases               Feature // kubernetes.podspec-hostaliases
	PodSpecNodeSelector              Feature // kubernetes.podspec-nodeselector
	PodSpecRuntimeClassName          Feature // kubernetes.podspec-runtimeclassname
	PodSpecTolerations               Feature // kubernetes.podspec-tolerations
	PodSpecShareProcessNamespace     Feature // kubernetes.podspec-shareprocessnamespace
	PodSpecPriorityClassName         Feature // kubernetes.podspec-priorityclassname
	PodSpecSchedulerName             Feature // kubernetes.podspec-schedulername
	PodSpecDNSPolicy                 Feature // kubernetes.podspec-dnspolicy
	PodSpecDNSConfig                 Feature // kubernetes.podspec-dnsconfig
	PodSpecInitContainers            Feature // kubernetes.podspec-init-containers
	// PodSpecSecurityContext is kubernetes.podspec-securitycontext: the
	// pod's securityContext (runAsUser, fsGroup, …). While it is off only
	// a seccompProfile may be set there, and only under SecurePodDefaults.
	PodSpecSecurityContext Feature
	// PodSpecFieldRef is kubernetes.podspec-fieldref: environment values
	// from the downward API (fieldRef, resourceFieldRef).
	PodSpecFieldRef Feature
	// ContainerSpecAddCapabilities is kubernetes.containerspec-addcapabilities:
	// capabilities a container adds beyond the runtime's defaults.
	ContainerSpecAddCapabilities Feature
	PodSpecVolumesEmptyDir       Feature // kubernetes.podspec-volumes-emptydir
	PodSpecPersistentVolumeClaim Feature // kubernetes.podspec-persistent-volume-claim
	// PodSpecPersistentVolumeWrite is kubernetes.podspec-persistent-volume-write:
	// a claim mounted writable; off, every claim and mount must be read-only.
	PodSpecPersistentVolumeWrite Feature
	// PodSpecDryRun is kubernetes.podspec-dryrun: admission creates the
	// Revision's pod as a server-side dry run, so a pod Kubernetes would
	// refuse is refused at the Service. Allowed: only for a Service
	// annotated features.knative.dev/podspec-dryrun: enabled.
	PodSpecDryRun Feature
	// SecurePodDefaults is secure-pod-defaults: Enabled makes admission
	// default every container to the restricted Pod Security level
	// (allowPrivilegeEscalation false, capabilities dropped, seccomp
	// RuntimeDefault, runAsNonRoot) where the Revision leaves it unset,
	// and lets a container add NET_BIND_SERVICE back.
	SecurePodDefaults Feature
	// QueueProxyResourceDefaults is queueproxy.resource-defaults: the
	// queue-proxy gets Knative's default requests and limits.
	QueueProxyResourceDefaults Feature
	// QueueProxyMountPodInfo is queueproxy.mount-podinfo: the pod's
	// annotations mounted into the queue-proxy (Allowed: per Service,
	// by features.knative.dev/queueproxy-podinfo: enabled).
	QueueProxyMountPodInfo Feature
	// TagHeaderBasedRouting is tag-header-based-routing: the
	// Knative-Serving-Tag header picks a Route's tagged target.
	TagHeaderBasedRouting Feature
	// AutoDetectHTTP2 is autodetect-http2: the queue-proxy and activator
	// speak h2c to an app that answers it without a port named h2c.
	AutoDetectHTTP2 Feature
}

// The features.knative.dev annotations with which a Service opts into a
// behaviour its flag leaves Allowed.
const (
	DryRunAnnotation            = "features.knative.dev/podspec-dryrun"
	QueueProxyPodInfoAnnotation = "features.knative.dev/queueproxy-podinfo"
)

// featureFlag is one config-features key, its Knative default and where
// it is kept.
type featureFlag struct {
	key string
	def Feature
	dst func(*Features) *Feature
}

// featureFlags are Knative Serving 1.15's flags with its defaults.
var featureFlags = []featureFlag{
	{"multi-container", FeatureEnabled, func(f *Features) *Feature { return &f.MultiContainer }},
	{"multi-container-probing", FeatureDisabled, func(f *Features) *Feature { return &f.MultiContainerProbing }},
	{"kubernetes.podspec-affinity", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecAffinity }},
	{"kubernetes.podspec-topologyspreadconstraints", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecTopologySpreadConstraints }},
	{"kubernetes.podspec-dryrun", FeatureAllowed, func(f *Features) *Feature { return &f.PodSpecDryRun }},
	{"kubernetes.podspec-hostaliases", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecHostAliases }},
	{"kubernetes.podspec-fieldref", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecFieldRef }},
	{"kubernetes.podspec-nodeselector", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecNodeSelector }},
	{"kubernetes.podspec-runtimeclassname", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecRuntimeClassName }},
	{"kubernetes.podspec-securitycontext", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecSecurityContext }},
	{"kubernetes.podspec-shareprocessnamespace", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecShareProcessNamespace }},
	{"kubernetes.podspec-priorityclassname", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecPriorityClassName }},
	{"kubernetes.podspec-schedulername", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecSchedulerName }},
	{"kubernetes.containerspec-addcapabilities", FeatureDisabled, func(f *Features) *Feature { return &f.ContainerSpecAddCapabilities }},
	{"kubernetes.podspec-tolerations", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecTolerations }},
	{"kubernetes.podspec-volumes-emptydir", FeatureEnabled, func(f *Features) *Feature { return &f.PodSpecVolumesEmptyDir }},
	{"kubernetes.podspec-init-containers", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecInitContainers }},
	{"kubernetes.podspec-persistent-volume-claim", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecPersistentVolumeClaim }},
	{"kubernetes.podspec-persistent-volume-write", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecPersistentVolumeWrite }},
	{"kubernetes.podspec-dnspolicy", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecDNSPolicy }},
	{"kubernetes.podspec-dnsconfig", FeatureDisabled, func(f *Features) *Feature { return &f.PodSpecDNSConfig }},
	{"secure-pod-defaults", FeatureDisabled, func(f *Features) *Feature { return &f.SecurePodDefaults }},
	{"tag-header-based-routing", FeatureDisabled, func(f *Features) *Feature { return &f.TagHeaderBasedRouting }},
	{"queueproxy.resource-defaults", FeatureDisabled, func(f *Features) *Feature { return &f.QueueProxyResourceDefaults }},
	{"queueproxy.mount-podinfo", FeatureDisabled, func(f *Features) *Feature { return &f.QueueProxyMountPodInfo }},
	{"autodetect-http2", FeatureDisabled, func(f *Features) *Feature { return &f.AutoDetectHTTP2 }},
}

// FeatureKeys are the config-features keys knit reads, in Knative's order.
func FeatureKeys() []string {
	keys := make([]string, len(featureFlags))
	for i, f := range featureFlags {
		keys[i] = f.key
	}
	return keys
}

// DefaultFeatures is config-features with Knative's defaults, what a
// cluster without the ConfigMap runs with.
func DefaultFeatures() Features {
	var f Features
	for _, flag := range featureFlags {
		*flag.dst(&f) = flag.def
	}
	return f
}

// ParseFeatures reads config-features with Knative's defaults. Values are
// Knative's, in any case; anything else is an error, so a typo does not
// silently leave a field gated. Keys knit does not know (a flag of a
// later Knative) are ignored, as Knative ignores them.
func ParseFeatures(data map[string]string) (*Features, error) {
	f := DefaultFeatures()
	p := parser{cm: FeaturesConfigName, data: data}
	for _, flag := range featureFlags {
		p.feature(flag.key, flag.dst(&f))
	}
	if p.err != nil {
		return nil, p.err
	}
	return &f, nil
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

// OptedIn reports whether a behaviour gated by f is on for an object with
// these annotations: always when Enabled, never when Disabled, and when
// Allowed only if the annotation says "enabled" (Knative reads it without
// regard to case).
func OptedIn(f Feature, annotations map[string]string, key string) bool {
	switch f {
	case FeatureEnabled:
		return true
	case FeatureAllowed:
		return strings.EqualFold(annotations[key], "enabled")
	}
	return false
}
