package rollout

import (
	"testing"
)

// FuzzPlanFor feeds the annotation a commit carries: any value is a plan
// or an error, never a panic, and a plan is one the stepper can run.
func FuzzPlanFor(f *testing.F) {
	for _, seed := range []string{"10,50 every 1m", "off", "", "5 every 5s max-5xx 0.5 max-p99 1.1x min-requests 50", "100", "10,5", "every"} {
		f.Add(seed, "20 every 30s")
	}
	f.Fuzz(func(t *testing.T, annotation, repo string) {
		p, _, ok, err := PlanFor(annotation, repo)
		if err != nil || !ok {
			return
		}
		if verr := p.Validate(); verr != nil || len(p.Steps) == 0 {
			t.Fatalf("PlanFor(%q, %q) = %+v, which does not validate: %v", annotation, repo, p, verr)
		}
	})
}
