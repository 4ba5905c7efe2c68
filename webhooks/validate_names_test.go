package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateObjectName(t *testing.T) {
	tests := []struct {
		name string
		meta metav1.ObjectMeta
		want []string
	}{{
		name: "a DNS-1035 label",
		meta: metav1.ObjectMeta{Name: "hello"},
	}, {
		name: "a generateName prefix may end with a dash",
		meta: metav1.ObjectMeta{GenerateName: "hello-"},
	}, {
		name: "a name starting with a digit",
		meta: metav1.ObjectMeta{Name: "1hello"},
		want: []string{"invalid value: 1hello: metadata.name\nnot a DNS 1035 label: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"},
	}, {
		name: "a name too long for a host name",
		meta: metav1.ObjectMeta{Name: "a123456789012345678901234567890123456789012345678901234567890123"},
		want: []string{"invalid value: a123456789012345678901234567890123456789012345678901234567890123: metadata.name\nnot a DNS 1035 label: must be no more than 63 characters"},
	}, {
		name: "a generateName with a dot",
		meta: metav1.ObjectMeta{GenerateName: "hello.world-"},
		want: []string{"invalid value: hello.world-: metadata.generateName\nnot a DNS 1035 label prefix: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validateObjectName(tc.meta, field.NewPath("metadata")))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateRevisionName(t *testing.T) {
	const p = "spec.template.metadata"
	tests := []struct {
		name         string
		meta, parent metav1.ObjectMeta
		want         []string
	}{{
		name:   "no name: the controller picks one",
		parent: metav1.ObjectMeta{Name: "hello"},
	}, {
		name:   "prefixed by the parent's name",
		meta:   metav1.ObjectMeta{Name: "hello-v2"},
		parent: metav1.ObjectMeta{Name: "hello"},
	}, {
		name:   "not prefixed",
		meta:   metav1.ObjectMeta{Name: "goodbye-v2"},
		parent: metav1.ObjectMeta{Name: "hello"},
		want:   []string{"invalid value: goodbye-v2: " + p + ".name\nmust have prefix \"hello-\""},
	}, {
		name:   "the parent's name alone is not enough",
		meta:   metav1.ObjectMeta{Name: "hello"},
		parent: metav1.ObjectMeta{Name: "hello"},
		want:   []string{"invalid value: hello: " + p + ".name\nmust have prefix \"hello-\""},
	}, {
		name:   "a parent named by generateName",
		meta:   metav1.ObjectMeta{Name: "hello-v2"},
		parent: metav1.ObjectMeta{GenerateName: "hello-"},
		want:   []string{"must not set the field(s): " + p + ".name\na parent named by generateName cannot name its Revisions"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validateRevisionName(tc.meta, tc.parent, field.NewPath("spec", "template", "metadata")))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
