package build

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func object(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestRewrite(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantImages []string
		want       string
	}{{
		name: "a Service's containers and init containers",
		in: `kind: Service
spec:
  template:
    spec:
      initContainers: [{image: "ko://./cmd/migrate"}]
      containers: [{image: "ko://./cmd/hello"}, {image: "ko://./cmd/hello", name: b}, {image: nginx}]`,
		wantImages: []string{"ko://./cmd/hello", "ko://./cmd/migrate"},
		want: `kind: Service
spec:
  template:
    spec:
      initContainers: [{image: "r/migrate@sha256:2"}]
      containers: [{image: "r/hello@sha256:1"}, {image: "r/hello@sha256:1", name: b}, {image: nginx}]`,
	}, {
		name:       "a Revision",
		in:         `{kind: Revision, spec: {containers: [{image: "ko://./cmd/hello"}]}}`,
		wantImages: []string{"ko://./cmd/hello"},
		want:       `{kind: Revision, spec: {containers: [{image: "r/hello@sha256:1"}]}}`,
	}, {
		name: "no containers",
		in:   `{kind: ConfigMap, data: {a: b}}`,
		want: `{kind: ConfigMap, data: {a: b}}`,
	}, {
		name:       "an image not built stays",
		in:         `{kind: Revision, spec: {containers: [{image: "ko://./cmd/other"}]}}`,
		wantImages: []string{"ko://./cmd/other"},
		want:       `{kind: Revision, spec: {containers: [{image: "ko://./cmd/other"}]}}`,
	}}
	built := map[string]string{"ko://./cmd/hello": "r/hello@sha256:1", "ko://./cmd/migrate": "r/migrate@sha256:2"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, tt.in)
			if diff := cmp.Diff(tt.wantImages, SourceImages(obj)); diff != "" {
				t.Errorf("SourceImages (-want +got):\n%s", diff)
			}
			Rewrite(obj, built)
			if diff := cmp.Diff(object(t, tt.want).Object, obj.Object); diff != "" {
				t.Errorf("Rewrite (-want +got):\n%s", diff)
			}
		})
	}
}
