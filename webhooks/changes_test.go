package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestChanges(t *testing.T) {
	base := func() servingv1.RevisionSpec {
		s := defaultedSpec()
		s.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}
		s.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "1"}}
		return s
	}
	tests := []struct {
		name   string
		change func(*servingv1.RevisionSpec)
		want   []string
	}{{
		name:   "nothing",
		change: func(*servingv1.RevisionSpec) {},
	}, {
		name: "semantically equal quantities and nil versus empty are no change",
		change: func(s *servingv1.RevisionSpec) {
			s.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("134217728")
			s.Volumes = []corev1.Volume{}
		},
	}, {
		name: "leaf fields by JSON path, through the inlined PodSpec",
		change: func(s *servingv1.RevisionSpec) {
			s.Containers[0].Image = "v2"
			s.TimeoutSeconds = ptr.To[int64](10)
			s.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("256Mi")
		},
		want: []string{
			`spec.containers[0].image: -"ko://github.com/knitops/knit/examples/helloworld" +"v2"`,
			`spec.containers[0].resources.limits[memory]: -"128Mi" +"256Mi"`,
			`spec.timeoutSeconds: -300 +10`,
		},
	}, {
		name: "added and removed elements and pointers",
		change: func(s *servingv1.RevisionSpec) {
			s.Containers[0].Env = append(s.Containers[0].Env, corev1.EnvVar{Name: "B", Value: "2"})
			s.Containers[0].ReadinessProbe = nil
			s.IdleTimeoutSeconds = ptr.To[int64](5)
		},
		want: []string{
			`spec.containers[0].env[1]: -<none> +{"name":"B","value":"2"}`,
			`spec.containers[0].readinessProbe: -{"tcpSocket":{"port":0},"successThreshold":1} +<none>`,
			`spec.idleTimeoutSeconds: -<none> +5`,
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old, new := base(), base()
			tc.change(&new)
			var got []string
			for _, c := range changes(field.NewPath("spec"), old, new) {
				got = append(got, c.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}
