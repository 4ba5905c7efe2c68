package webhooks

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// validateSpecImmutable is Knative's Revision update rule: a Revision is a
// snapshot, so each changed field of its spec is refused by name.
func validateSpecImmutable(old, new servingv1.RevisionSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, c := range changes(path, old, new) {
		errs = append(errs, field.Forbidden(c.path,
			"a Revision's spec is immutable (-old +new: -"+c.old+" +"+c.new+"); change the template of its Configuration or Service instead"))
	}
	return errs
}

// validateNameChange is Knative's VerifyNameChange: a template that names
// its Revision must change the name whenever it changes, since that name
// is the new Revision's and the old Revision already holds it.
func validateNameChange(old, new servingv1.RevisionTemplateSpec, path *field.Path) field.ErrorList {
	if new.Name == "" || new.Name != old.Name {
		return nil
	}
	cs := changes(path, old, new)
	if len(cs) == 0 {
		return nil
	}
	lines := make([]string, len(cs))
	for i, c := range cs {
		lines[i] = c.String()
	}
	return field.ErrorList{field.Invalid(path.Child("metadata", "name"), new.Name,
		"Saw the following changes without a name change (-old +new): "+strings.Join(lines, "; ")+
			"; give the template a new name, or remove it to have one generated")}
}
