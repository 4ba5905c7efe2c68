package autoscaling

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKeyGet(t *testing.T) {
	tests := []struct {
		name       string
		anns       map[string]string
		key, value string
		ok         bool
	}{{
		name: "absent",
	}, {
		name: "current spelling",
		anns: map[string]string{"autoscaling.knative.dev/min-scale": "1"},
		key:  "autoscaling.knative.dev/min-scale", value: "1", ok: true,
	}, {
		name: "legacy spelling",
		anns: map[string]string{"autoscaling.knative.dev/minScale": "2"},
		key:  "autoscaling.knative.dev/minScale", value: "2", ok: true,
	}, {
		name: "both: the current spelling wins, as in Knative",
		anns: map[string]string{"autoscaling.knative.dev/min-scale": "1", "autoscaling.knative.dev/minScale": "2"},
		key:  "autoscaling.knative.dev/min-scale", value: "1", ok: true,
	}, {
		name: "an empty value is present",
		anns: map[string]string{"autoscaling.knative.dev/min-scale": ""},
		key:  "autoscaling.knative.dev/min-scale", ok: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key, value, ok := MinScaleAnnotation.Get(tc.anns)
			if diff := cmp.Diff([]any{tc.key, tc.value, tc.ok}, []any{key, value, ok}); diff != "" {
				t.Errorf("Get (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsKnown(t *testing.T) {
	got := map[string]bool{}
	for _, key := range []string{
		MinScaleAnnotationKey, Prefix + "minScale", WindowAnnotationKey, ActivationScaleAnnotationKey, ClassAnnotationKey,
		Prefix + "minscale", Prefix + "window-size", Prefix + "activationScale", "min-scale", "example.com/min-scale", Prefix,
	} {
		got[key] = IsKnown(key)
	}
	want := map[string]bool{
		MinScaleAnnotationKey: true, Prefix + "minScale": true, WindowAnnotationKey: true, ActivationScaleAnnotationKey: true, ClassAnnotationKey: true,
		Prefix + "minscale": false, Prefix + "window-size": false, Prefix + "activationScale": false, "min-scale": false, "example.com/min-scale": false, Prefix: false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("IsKnown (-want +got):\n%s", diff)
	}
	if len(Keys) != 15 {
		t.Errorf("Keys holds %d keys, want Knative's 15", len(Keys))
	}
}

func TestDuplicates(t *testing.T) {
	got := Duplicates(map[string]string{
		MinScaleAnnotationKey: "1", Prefix + "minScale": "2",
		WindowAnnotationKey: "60s", TargetBurstCapacityAnnotationKey: "0", Prefix + "targetBurstCapacity": "-1",
		Prefix + "maxScale": "3",
	})
	want := []*Error{
		{Key: Prefix + "minScale", Value: "2", Forbidden: true, Detail: MinScaleAnnotationKey + " is set too; set only one of the two spellings"},
		{Key: Prefix + "targetBurstCapacity", Value: "-1", Forbidden: true, Detail: TargetBurstCapacityAnnotationKey + " is set too; set only one of the two spellings"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Duplicates (-want +got):\n%s", diff)
	}
}
