package queuesidecar

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func TestResources(t *testing.T) {
	app := &corev1.Container{Resources: corev1.ResourceRequirements{
		Requests: list("cpu", "500m", "memory", "1Gi"), Limits: list("cpu", "4", "memory", "100Mi")}}
	tests := []struct {
		name        string
		annotations map[string]string
		settings    Settings
		defaults    bool
		want        corev1.ResourceRequirements
	}{{
		name: "nothing set: none, as Knative",
	}, {
		name: "queueproxy.resource-defaults", defaults: true,
		want: corev1.ResourceRequirements{Requests: list("cpu", "25m", "memory", "400Mi"), Limits: list("cpu", "1", "memory", "800Mi")},
	}, {
		name:     "config-deployment's keys win over the defaults",
		settings: Settings{CPURequest: ptr(resource.MustParse("50m")), EphemeralStorageLimit: ptr(resource.MustParse("1Gi"))}, defaults: true,
		want: corev1.ResourceRequirements{Requests: list("cpu", "50m", "memory", "400Mi"), Limits: list("cpu", "1", "memory", "800Mi", "ephemeral-storage", "1Gi")},
	}, {
		name:        "a percentage of the app's, clamped",
		annotations: map[string]string{ResourcePercentage: "10"},
		// 50m → 50m; 4 cpu → 400m; 1Gi → 102.4Mi; 100Mi → 10Mi, raised to 200Mi.
		want: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{"cpu": *resource.NewMilliQuantity(50, resource.BinarySI), "memory": *resource.NewMilliQuantity(107374182400, resource.BinarySI)},
			Limits:   corev1.ResourceList{"cpu": *resource.NewMilliQuantity(400, resource.BinarySI), "memory": resource.MustParse("200Mi")},
		},
	}, {
		name: "explicit annotations last",
		annotations: map[string]string{ResourcePercentage: "10", CPUResourceRequest: "300m", MemoryResourceLimit: "1Gi",
			EphemeralStorageResourceRequest: "64Mi"},
		want: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{"cpu": resource.MustParse("300m"), "memory": *resource.NewMilliQuantity(107374182400, resource.BinarySI), "ephemeral-storage": resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{"cpu": *resource.NewMilliQuantity(400, resource.BinarySI), "memory": resource.MustParse("1Gi")},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Resources(tc.annotations, app, tc.settings, tc.defaults)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("Resources (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		annotations map[string]string
		want        []string
	}{
		{annotations: map[string]string{ResourcePercentage: "20", CPUResourceLimit: "1"}},
		{annotations: map[string]string{ResourcePercentage: "0.01"}, want: []string{ResourcePercentage + `: invalid value "0.01": want a percentage between 0.1 and 100`}},
		{annotations: map[string]string{resourcePercentageOld: "lots"}, want: []string{resourcePercentageOld + `: invalid value "lots": want a percentage between 0.1 and 100`}},
		{annotations: map[string]string{MemoryResourceRequest: "big"}, want: []string{MemoryResourceRequest + `: invalid value "big": want a quantity such as 100m or 400Mi`}},
	}
	for _, tc := range tests {
		var got []string
		for _, err := range Validate(tc.annotations) {
			got = append(got, err.Error())
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Validate(%v) (-want +got):\n%s", tc.annotations, diff)
		}
	}
}

func FuzzResources(f *testing.F) {
	f.Add("12.5", "100m", "1Gi")
	f.Fuzz(func(t *testing.T, pct, cpu, mem string) {
		anns := map[string]string{ResourcePercentage: pct, CPUResourceLimit: cpu, MemoryResourceRequest: mem}
		if len(Validate(anns)) > 0 {
			return
		}
		Resources(anns, &corev1.Container{}, Settings{}, true)
	})
}
