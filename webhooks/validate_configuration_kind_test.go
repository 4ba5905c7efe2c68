package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestValidateConfiguration(t *testing.T) {
	configuration := func(templateName, img string) *servingv1.Configuration {
		c := &servingv1.Configuration{
			ObjectMeta: metav1.ObjectMeta{Name: "hello"},
			Spec:       servingv1.ConfigurationSpec{Template: servingv1.RevisionTemplateSpec{Spec: defaultedSpec()}},
		}
		c.Spec.Template.Name, c.Spec.Template.Spec.Containers[0].Image = templateName, img
		return c
	}
	tests := []struct {
		name   string
		c, old *servingv1.Configuration
		want   []string
	}{{
		name: "valid",
		c:    configuration("hello-v1", image),
	}, {
		name: "template checks apply",
		c:    configuration("bye-v1", ""),
		want: []string{
			"invalid value: bye-v1: spec.template.metadata.name\nmust have prefix \"hello-\"",
			"missing field(s): spec.template.spec.containers[0].image",
		},
	}, {
		name: "a named template cannot change under the same name",
		old:  configuration("hello-v1", "v1"),
		c:    configuration("hello-v1", "v2"),
		want: []string{"invalid value: hello-v1: spec.template.metadata.name\nSaw the following changes without a name change (-old +new): spec.template.spec.containers[0].image: -\"v1\" +\"v2\"; give the template a new name, or remove it to have one generated"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validateConfiguration(tc.c, tc.old, DefaultConfig()))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
