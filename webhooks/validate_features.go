package webhooks

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

// gatedField is a pod field a Revision may set only when the operator
// turned its config-features flag on (Knative's PodSpecMask, where any
// value but Disabled lets the field through).
type gatedField struct {
	name, flag string
	set        func(servingv1.PodSpec) bool
	feature    func(config.Features) config.Feature
}

// gatedFields are the pod fields Knative gates by a flag: scheduling is
// the operator's business, since a toleration reaches nodes tainted for
// others, a nodeSelector, affinity or runtime class picks where and how
// the app runs, and a priority class can preempt other tenants. In
// field-name order. Init containers and the pod's securityContext have
// rules of their own (validateInitContainers, validatePodSecurityContext).
var gatedFields = []gatedField{
	{name: "affinity", flag: "kubernetes.podspec-affinity",
		set:     func(s servingv1.PodSpec) bool { return s.Affinity != nil },
		feature: func(f config.Features) config.Feature { return f.PodSpecAffinity }},
	{name: "dnsConfig", flag: "kubernetes.podspec-dnsconfig",
		set:     func(s servingv1.PodSpec) bool { return s.DNSConfig != nil },
		feature: func(f config.Features) config.Feature { return f.PodSpecDNSConfig }},
	{name: "dnsPolicy", flag: "kubernetes.podspec-dnspolicy",
		set:     func(s servingv1.PodSpec) bool { return s.DNSPolicy != "" },
		feature: func(f config.Features) config.Feature { return f.PodSpecDNSPolicy }},
	{name: "hostAliases", flag: "kubernetes.podspec-hostaliases",
		set:     func(s servingv1.PodSpec) bool { return len(s.HostAliases) > 0 },
		feature: func(f config.Features) config.Feature { return f.PodSpecHostAliases }},
	{name: "nodeSelector", flag: "kubernetes.podspec-nodeselector",
		set:     func(s servingv1.PodSpec) bool { return len(s.NodeSelector) > 0 },
		feature: func(f config.Features) config.Feature { return f.PodSpecNodeSelector }},
	{name: "priorityClassName", flag: "kubernetes.podspec-priorityclassname",
		set:     func(s servingv1.PodSpec) bool { return s.PriorityClassName != "" },
		feature: func(f config.Features) config.Feature { return f.PodSpecPriorityClassName }},
	{name: "runtimeClassName", flag: "kubernetes.podspec-runtimeclassname",
		set:     func(s servingv1.PodSpec) bool { return s.RuntimeClassName != nil },
		feature: func(f config.Features) config.Feature { return f.PodSpecRuntimeClassName }},
	{name: "schedulerName", flag: "kubernetes.podspec-schedulername",
		set:     func(s servingv1.PodSpec) bool { return s.SchedulerName != "" },
		feature: func(f config.Features) config.Feature { return f.PodSpecSchedulerName }},
	{name: "shareProcessNamespace", flag: "kubernetes.podspec-shareprocessnamespace",
		set:     func(s servingv1.PodSpec) bool { return s.ShareProcessNamespace != nil },
		feature: func(f config.Features) config.Feature { return f.PodSpecShareProcessNamespace }},
	{name: "topologySpreadConstraints", flag: "kubernetes.podspec-topologyspreadconstraints",
		set:     func(s servingv1.PodSpec) bool { return len(s.TopologySpreadConstraints) > 0 },
		feature: func(f config.Features) config.Feature { return f.PodSpecTopologySpreadConstraints }},
	{name: "tolerations", flag: "kubernetes.podspec-tolerations",
		set:     func(s servingv1.PodSpec) bool { return len(s.Tolerations) > 0 },
		feature: func(f config.Features) config.Feature { return f.PodSpecTolerations }},
}

// validateGatedFields refuses the gated fields spec sets while their
// flag is off, as Knative's disallowed-field error ("must not set the
// field(s)"), with the flag that would allow them as its details.
func validateGatedFields(spec servingv1.PodSpec, path *field.Path, features config.Features) field.ErrorList {
	var errs field.ErrorList
	for _, g := range gatedFields {
		if g.set(spec) && !g.feature(features).On() {
			errs = append(errs, field.Forbidden(path.Child(g.name), flagOff(g.flag)))
		}
	}
	return errs
}

// flagOff is the message of a field refused because flag is not on.
func flagOff(flag string) string {
	return fmt.Sprintf("must not set the field(s): config-features %s is Disabled", flag)
}
