package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestValidateSpecImmutable(t *testing.T) {
	old, new := defaultedSpec(), defaultedSpec()
	if errs := validateSpecImmutable(old, new, field.NewPath("spec")); len(errs) != 0 {
		t.Errorf("unchanged spec: %v", errs)
	}
	new.Containers[0].Image = "v2"
	got := messages(validateSpecImmutable(old, new, field.NewPath("spec")))
	want := []string{`a Revision's spec is immutable (-old +new: -"` + image + `" +"v2"); change the template of its Configuration or Service instead: spec.containers[0].image`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestValidateNameChange(t *testing.T) {
	template := func(name, img string) servingv1.RevisionTemplateSpec {
		t := servingv1.RevisionTemplateSpec{Spec: defaultedSpec()}
		t.Name, t.Spec.Containers[0].Image = name, img
		return t
	}
	tests := []struct {
		name     string
		old, new servingv1.RevisionTemplateSpec
		want     []string
	}{{
		name: "no name: every change stamps a new Revision",
		old:  template("", "v1"), new: template("", "v2"),
	}, {
		name: "a new name with the change",
		old:  template("hello-v1", "v1"), new: template("hello-v2", "v2"),
	}, {
		name: "same name, same template",
		old:  template("hello-v1", "v1"), new: template("hello-v1", "v1"),
	}, {
		name: "same name, changed template",
		old:  template("hello-v1", "v1"), new: template("hello-v1", "v2"),
		want: []string{"invalid value: hello-v1: spec.template.metadata.name\nSaw the following changes without a name change (-old +new): spec.template.spec.containers[0].image: -\"v1\" +\"v2\"; give the template a new name, or remove it to have one generated"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validateNameChange(tc.old, tc.new, field.NewPath("spec", "template")))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
