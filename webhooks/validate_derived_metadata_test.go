package webhooks

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestValidateDerivedMetadata(t *testing.T) {
	const limit = 256 << 10
	// fill makes one annotation whose key and value take n bytes.
	fill := func(n int) map[string]string { return map[string]string{"a": strings.Repeat("x", n-1)} }
	// knit's routing-state annotation and a creator of 5 bytes.
	routing := len(routingStateModifiedAnnotation) + len(routingStateModifiedValue)
	creator := len(servingv1.CreatorAnnotation) + len("alice")
	path := field.NewPath("spec", "template", "metadata")
	tests := []struct {
		name                string
		labels, annotations map[string]string
		creator             string
		want                []string
	}{{
		name:        "ordinary metadata",
		labels:      map[string]string{"app": "hello", "example.com/team": "web"},
		annotations: map[string]string{"autoscaling.knative.dev/min-scale": "1", "Example.com/Note": "anything at all, any length"},
		creator:     "alice",
	}, {
		name:        "annotations that fit with what knit adds",
		annotations: fill(limit - routing - creator),
		creator:     "alice",
	}, {
		name:        "annotations that fit alone but not with what knit adds",
		annotations: fill(limit - routing),
		creator:     "alice",
		want: []string{"may not be more than 262144 bytes in all, the Kubernetes limit, " +
			"counting the 92 bytes knit adds to the Revision; these come to 262176: spec.template.metadata.annotations"},
	}, {
		name:        "a megabyte",
		annotations: fill(1 << 20),
		want: []string{"may not be more than 262144 bytes in all, the Kubernetes limit, " +
			"counting the 60 bytes knit adds to the Revision; these come to 1048636: spec.template.metadata.annotations"},
	}, {
		name:        "a Revision that already carries knit's annotations is not charged twice",
		annotations: map[string]string{"a": strings.Repeat("x", limit-1-routing), routingStateModifiedAnnotation: routingStateModifiedValue},
	}, {
		name:   "label keys and values the API server refuses",
		labels: map[string]string{"bad key!": "v", "ok": strings.Repeat("v", 64), "also-ok": "no spaces allowed"},
		want: []string{
			"invalid value: no spaces allowed: spec.template.metadata.labels\na valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
			"invalid value: bad key!: spec.template.metadata.labels\nname part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
			"invalid value: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv: spec.template.metadata.labels\nmust be no more than 63 bytes",
		},
	}, {
		name:        "an annotation key the API server refuses",
		annotations: map[string]string{"two/slashes/here": "v"},
		want:        []string{"invalid value: two/slashes/here: spec.template.metadata.annotations\na valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validateDerivedMetadata(tc.labels, tc.annotations, tc.creator, path))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// A Service whose template carries a megabyte of annotations is refused
// at admission, naming the field, instead of being stored with a Revision
// the API server will never accept.
func TestValidateServiceBoundsTemplateMetadata(t *testing.T) {
	s := service("hello", defaultedSpec(), latest(100))
	s.Annotations = map[string]string{servingv1.CreatorAnnotation: "alice"}
	s.Spec.Template.Annotations = map[string]string{"example.com/blob": strings.Repeat("x", 1<<20)}
	got := messages(validateService(s, nil, DefaultConfig()))
	want := []string{"may not be more than 262144 bytes in all, the Kubernetes limit, " +
		"counting the 92 bytes knit adds to the Revision; these come to 1048684: spec.template.metadata.annotations"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
