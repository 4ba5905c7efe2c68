package webhooks

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

// gatedField is a pod field a Revision may set only when the operator
// turned its config-features flag on (Knative's PodSpecMask).
type gatedField struct {
	name, flag string
	set        func(servingv1.PodSpec) bool
	feature    func(config.Features) config.Feature
}

// gatedFields are knit's: scheduling is the operator's business, since a
// toleration reaches nodes tainted for others and a nodeSelector or
// runtime class picks where and how the app runs. In field-name order.
var gatedFields = []gatedField{
	{name: "nodeSelector", flag: "kubernetes.podspec-nodeselector",
		set:     func(s servingv1.PodSpec) bool { return len(s.NodeSelector) > 0 },
		feature: func(f config.Features) config.Feature { return f.PodSpecNodeSelector }},
	{name: "runtimeClassName", flag: "kubernetes.podspec-runtimeclassname",
		set:     func(s servingv1.PodSpec) bool { return s.RuntimeClassName != nil },
		feature: func(f config.Features) config.Feature { return f.PodSpecRuntimeClassName }},
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
			errs = append(errs, field.Forbidden(path.Child(g.name),
				"must not set the field(s): config-features "+g.flag+" is Disabled"))
		}
	}
	return errs
}
