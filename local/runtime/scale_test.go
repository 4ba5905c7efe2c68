package runtime

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestPlanScale(t *testing.T) {
	at := func(id, hash string, ready bool, age time.Duration) replicaView {
		return replicaView{ID: id, Hash: hash, Ready: ready, Created: now.Add(-age)}
	}
	for _, tc := range []struct {
		name     string
		replicas []replicaView
		desired  int32
		want     scalePlan
	}{
		{"from zero", nil, 2, scalePlan{start: 2}},
		{"steady", []replicaView{at("a", "h1", true, time.Hour), at("b", "h1", false, time.Hour)}, 2, scalePlan{}},
		{"to zero", []replicaView{at("a", "h1", true, time.Hour), at("b", "h1", true, time.Minute)}, 0, scalePlan{stop: []string{"b", "a"}}},
		{"down: not ready first, then newest", []replicaView{
			at("old", "h1", true, time.Hour), at("new", "h1", true, time.Minute), at("sick", "h1", false, 2*time.Hour),
		}, 1, scalePlan{stop: []string{"sick", "new"}}},
		{"terminating replicas are not counted", []replicaView{{ID: "a", Hash: "h1", Terminating: true}}, 1, scalePlan{start: 1}},
		{"rollout: old serves until new is ready", []replicaView{at("old", "h0", true, time.Hour), at("new", "h1", false, 0)}, 1, scalePlan{}},
		{"rollout: new ready, old goes", []replicaView{at("old", "h0", true, time.Hour), at("new", "h1", true, 0)}, 1, scalePlan{stop: []string{"old"}}},
		{"rollout: old and not ready goes at once", []replicaView{at("old", "h0", false, time.Hour)}, 1, scalePlan{start: 1, stop: []string{"old"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := planScale(tc.replicas, "h1", tc.desired)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(scalePlan{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTemplateHashIsStable(t *testing.T) {
	d := deployment(1)
	d.Spec.Template.Labels = map[string]string{"app": "a"}
	h := templateHash(&d.Spec.Template)
	if again := templateHash(d.Spec.Template.DeepCopy()); again != h || len(h) != 10 {
		t.Errorf("hash %q then %q; want the same 10 characters", h, again)
	}
	d.Spec.Template.Labels["app"] = "b"
	if changed := templateHash(&d.Spec.Template); changed == h {
		t.Errorf("hash did not change with the template")
	}
}
