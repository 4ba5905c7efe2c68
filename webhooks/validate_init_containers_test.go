package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

func TestValidateInitContainers(t *testing.T) {
	const p = "spec.initContainers"
	on := DefaultConfig().Features
	on.PodSpecInitContainers = config.FeatureEnabled
	tests := []struct {
		name     string
		ics      []corev1.Container
		features config.Features
		want     []string
	}{{
		name: "none", features: DefaultConfig().Features,
	}, {
		name: "refused while the flag is off", features: DefaultConfig().Features,
		ics:  []corev1.Container{{Name: "setup", Image: image}},
		want: []string{"pod spec support for init-containers is off, but found 1 init containers (config-features kubernetes.podspec-init-containers): " + p},
	}, {
		name: "run in order when on", features: on,
		ics: []corev1.Container{{Name: "fetch", Image: image}, {Name: "migrate", Image: image, Command: []string{"/migrate"}}},
	}, {
		name: "a name the app has, the queue-proxy's, probes, no image", features: on,
		ics: []corev1.Container{
			{Name: "user-container", Image: image},
			{Name: "queue-proxy", Image: image},
			{Name: "probed", Image: image, ReadinessProbe: tcpProbe()},
			{Name: "empty", Stdin: true},
		},
		want: []string{
			`invalid value: user-container: ` + p + `[0].name` + "\n" + `duplicate container name "user-container"`,
			"invalid value: queue-proxy: " + p + "[1].name\nis reserved for knit's queue-proxy",
			"field not allowed in an init container: " + p + "[2].readinessProbe",
			"must not set the field(s): " + p + "[3].stdin",
			"missing field(s): " + p + "[3].image",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := defaultedSpec().PodSpec
			ps.InitContainers = tc.ics
			got := messages(validateInitContainers(ps, field.NewPath("spec"), tc.features))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultInitContainerNames(t *testing.T) {
	tests := []struct {
		name  string
		given []string
		taken string // a container's name
		want  []string
	}{
		{name: "one", given: []string{""}, want: []string{"init-container"}},
		{name: "several, around a chosen name", given: []string{"", "init-container-0", ""}, want: []string{"init-container-1", "init-container-0", "init-container-2"}},
		{name: "one whose default a container took", given: []string{""}, taken: "init-container", want: []string{"init-container-0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := &servingv1.RevisionSpec{PodSpec: servingv1.PodSpec{Containers: []corev1.Container{{Name: tc.taken}}}}
			for _, n := range tc.given {
				rs.InitContainers = append(rs.InitContainers, corev1.Container{Name: n})
			}
			defaultInitContainerNames(rs)
			var got []string
			for _, c := range rs.InitContainers {
				got = append(got, c.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
}
