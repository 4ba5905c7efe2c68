package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestValidateRevision(t *testing.T) {
	revision := func(anns map[string]string, timeout int64) *servingv1.Revision {
		r := &servingv1.Revision{ObjectMeta: metav1.ObjectMeta{Name: "hello-00001", Annotations: anns}, Spec: defaultedSpec()}
		r.Spec.TimeoutSeconds = ptr.To(timeout)
		return r
	}
	tests := []struct {
		name   string
		r, old *servingv1.Revision
		want   []string
	}{{
		name: "valid, with autoscaling annotations on its own metadata",
		r:    revision(map[string]string{"autoscaling.knative.dev/min-scale": "1"}, 300),
	}, {
		name: "create checks the spec and the annotations",
		r:    revision(map[string]string{"autoscaling.knative.dev/min-scale": "x"}, 9000),
		want: []string{
			"invalid value: x: metadata.annotations[autoscaling.knative.dev/min-scale]\nmust be an integer",
			"invalid value: 9000: spec.timeoutSeconds\nmust be between 0 and 600 (config-defaults max-revision-timeout-seconds)",
		},
	}, {
		name: "an update may change metadata",
		old:  revision(nil, 300),
		r:    revision(map[string]string{"team": "web"}, 300),
	}, {
		name: "an update keeps a spec a tighter limit now refuses",
		old:  revision(nil, 9000),
		r:    revision(map[string]string{"team": "web"}, 9000),
	}, {
		name: "an update may not change the spec",
		old:  revision(nil, 300),
		r:    revision(nil, 30),
		want: []string{"a Revision's spec is immutable (-old +new: -300 +30); change the template of its Configuration or Service instead: spec.timeoutSeconds"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validateRevision(tc.r, tc.old, DefaultConfig()))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
