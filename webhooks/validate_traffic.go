package webhooks

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// validateTraffic is Knative's traffic list validation: each target on its
// own, unique tags, and percents adding up to 100 when targets are given.
// inService is true for a Service's traffic, whose targets follow the
// Service's own Configuration.
func validateTraffic(traffic []servingv1.TrafficTarget, path *field.Path, inService bool) field.ErrorList {
	var errs field.ErrorList
	var sum int64
	tags := map[string]int{}
	for i, tt := range traffic {
		p := path.Index(i)
		errs = append(errs, validateTarget(tt, p, inService)...)
		if tt.Percent != nil {
			sum += *tt.Percent
		}
		if tt.Tag == "" {
			continue
		}
		if msgs := validation.IsDNS1035Label(tt.Tag); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("tag"), tt.Tag, strings.Join(msgs, "; ")))
		}
		if j, ok := tags[tt.Tag]; ok {
			errs = append(errs, field.Invalid(p.Child("tag"), tt.Tag, "tag is already used by "+path.Index(j).String()))
		} else {
			tags[tt.Tag] = i
		}
	}
	if len(traffic) > 0 && sum != 100 {
		errs = append(errs, field.Invalid(path, sum, fmt.Sprintf("traffic targets' percents add up to %d; they must add up to 100", sum)))
	}
	return errs
}

// validateTarget checks that a target says which Revision it sends to,
// one way only, as Knative's TrafficTarget.Validate does for a spec.
func validateTarget(tt servingv1.TrafficTarget, p *field.Path, inService bool) field.ErrorList {
	var errs field.ErrorList
	if lr := tt.LatestRevision; lr != nil && *lr == (tt.RevisionName != "") {
		errs = append(errs, field.Invalid(p.Child("latestRevision"), *lr,
			fmt.Sprintf("may not set revisionName %q when latestRevision is %t", tt.RevisionName, *lr)))
	}
	switch {
	case inService && tt.ConfigurationName != "":
		errs = append(errs, field.Forbidden(p.Child("configurationName"),
			"must not set the field(s): a Service's targets follow its own Configuration; use latestRevision or revisionName"))
	case tt.RevisionName != "" && tt.ConfigurationName != "":
		errs = append(errs, field.Forbidden(p.Child("configurationName"), "set only one of revisionName and configurationName"))
	case tt.RevisionName != "":
		errs = append(errs, validateResourceName(tt.RevisionName, p.Child("revisionName"))...)
	case tt.ConfigurationName != "":
		errs = append(errs, validateResourceName(tt.ConfigurationName, p.Child("configurationName"))...)
	case !inService:
		errs = append(errs, field.Required(p.Child("revisionName"), "set one of revisionName or configurationName"))
	}
	if tt.Percent != nil && (*tt.Percent < 0 || *tt.Percent > 100) {
		errs = append(errs, field.Invalid(p.Child("percent"), *tt.Percent, "must be between 0 and 100"))
	}
	if tt.URL != "" {
		errs = append(errs, field.Forbidden(p.Child("url"), "must not set the field(s): the URL is reported in status"))
	}
	return errs
}

// validateResourceName checks a name that refers to a Revision or
// Configuration, which are DNS-1035 labels.
func validateResourceName(name string, p *field.Path) field.ErrorList {
	if msgs := validation.IsDNS1035Label(name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(p, name, strings.Join(msgs, "; "))}
	}
	return nil
}
