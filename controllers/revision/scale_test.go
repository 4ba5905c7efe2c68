package revision

import (
	"testing"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// A new Revision's Deployment starts at its initial-scale, read through
// the annotations' parser: either spelling, 1 when absent or refused.
func TestInitialScale(t *testing.T) {
	for _, tc := range []struct {
		anns map[string]string
		want int32
	}{
		{nil, 1},
		{map[string]string{"autoscaling.knative.dev/initial-scale": "3"}, 3},
		{map[string]string{"autoscaling.knative.dev/initialScale": "0"}, 0},
		{map[string]string{"autoscaling.knative.dev/initial-scale": "-1"}, 1},
		{map[string]string{"autoscaling.knative.dev/initial-scale": "many"}, 1},
		{map[string]string{"autoscaling.knative.dev/min-scale": "5"}, 1},
	} {
		rev := &servingv1.Revision{}
		rev.Annotations = tc.anns
		if got := initialScale(rev); got != tc.want {
			t.Errorf("initialScale(%v) = %d, want %d", tc.anns, got, tc.want)
		}
	}
}
