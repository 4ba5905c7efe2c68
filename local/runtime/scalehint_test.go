package runtime

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestReplicasWanted(t *testing.T) {
	now := time.Now()
	key := types.NamespacedName{Namespace: "ns", Name: "hello"}
	dep := func(generation int64, replicas int32) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: generation}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas)}}
	}
	for _, tc := range []struct {
		name     string
		hint     *scaleHint
		d        *appsv1.Deployment
		want     int32
		keptHint bool
	}{
		{"no hint: the spec", nil, dep(3, 2), 2, false},
		{"a hint on this spec: more", &scaleHint{generation: 3, replicas: 1, until: now.Add(time.Second)}, dep(3, 0), 1, true},
		{"a hint never scales down", &scaleHint{generation: 3, replicas: 1, until: now.Add(time.Second)}, dep(3, 4), 4, true},
		{"the write landed (a newer spec): the spec", &scaleHint{generation: 3, replicas: 1, until: now.Add(time.Second)}, dep(4, 1), 1, false},
		{"someone else's spec: the spec", &scaleHint{generation: 3, replicas: 2, until: now.Add(time.Second)}, dep(4, 0), 0, false},
		{"expired: the spec", &scaleHint{generation: 3, replicas: 1, until: now}, dep(3, 0), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &Runtime{hints: map[types.NamespacedName]scaleHint{}}
			if tc.hint != nil {
				rt.hints[key] = *tc.hint
			}
			if got := rt.replicasWanted(key, tc.d, now); got != tc.want {
				t.Errorf("replicasWanted = %d, want %d", got, tc.want)
			}
			if _, kept := rt.hints[key]; kept != tc.keptHint {
				t.Errorf("hint kept = %v, want %v", kept, tc.keptHint)
			}
		})
	}
}
