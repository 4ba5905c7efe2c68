package webhooks

import (
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateObjectName checks metadata.name and metadata.generateName are
// DNS-1035 labels, as Knative requires: the names become host names and
// Kubernetes Service names. path is the metadata's.
func validateObjectName(meta metav1.ObjectMeta, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if g := meta.GenerateName; g != "" {
		if msgs := apivalidation.NameIsDNS1035Label(g, true); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child("generateName"), g, "not a DNS 1035 label prefix: "+strings.Join(msgs, "; ")))
		}
	}
	if n := meta.Name; n != "" {
		if msgs := apivalidation.NameIsDNS1035Label(n, false); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child("name"), n, "not a DNS 1035 label: "+strings.Join(msgs, "; ")))
		}
	}
	return errs
}

// validateRevisionName is Knative's validateRevisionName for a template
// at path whose parent (Service or Configuration) has meta parent: a name
// the user brings must be a DNS-1035 label starting with the parent's
// name and a dash, so Revisions of different parents cannot collide.
func validateRevisionName(meta, parent metav1.ObjectMeta, path *field.Path) field.ErrorList {
	errs := validateObjectName(metav1.ObjectMeta{Name: meta.Name, GenerateName: meta.GenerateName}, path)
	if meta.Name == "" || len(errs) > 0 {
		return errs
	}
	if parent.Name == "" && parent.GenerateName != "" {
		return field.ErrorList{field.Forbidden(path.Child("name"),
			"must not set the field(s): a parent named by generateName cannot name its Revisions")}
	}
	if prefix := parent.Name + "-"; !strings.HasPrefix(meta.Name, prefix) {
		return field.ErrorList{field.Invalid(path.Child("name"), meta.Name, "must have prefix "+`"`+prefix+`"`)}
	}
	return nil
}
