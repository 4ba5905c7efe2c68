package pullrequest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/controllers/transition"
	"github.com/knitops/knit/gitsync/canary"
	"github.com/knitops/knit/internal/reconciletest"
)

func TestCanaryEvent(t *testing.T) {
	status := func(phase knitv1alpha1.CanaryPhase, step int32, percent int64, commit, message string) *knitv1alpha1.CanaryStatus {
		return &knitv1alpha1.CanaryStatus{Phase: phase, Step: step, Percent: percent, Steps: []int64{20, 50}, Commit: commit, Message: message}
	}
	const other = "fedcba9876543210fedcba9876543210fedcba98"
	waiting := status(knitv1alpha1.CanaryProgressing, 0, 0, head, "waiting for the preview to be ready")
	step1 := status(knitv1alpha1.CanaryProgressing, 1, 20, head, "")
	step2 := status(knitv1alpha1.CanaryProgressing, 2, 50, head, "step 1 (20%): pass")
	tests := []struct {
		name          string
		before, after *knitv1alpha1.CanaryStatus
		want          *transition.Event
	}{
		{"no canary", nil, nil, nil},
		{"waiting for the preview", nil, waiting, nil},
		{"the first step starts", waiting, step1,
			&transition.Event{Type: corev1.EventTypeNormal, Reason: "CanaryStep", Note: "step 1 of 2: 20% of the base's traffic to commit 0123456"}},
		{"the first step at once", nil, step1,
			&transition.Event{Type: corev1.EventTypeNormal, Reason: "CanaryStep", Note: "step 1 of 2: 20% of the base's traffic to commit 0123456"}},
		{"a step still running", step1, step1, nil},
		{"an inconclusive window", step1, status(knitv1alpha1.CanaryProgressing, 1, 20, head, "step 1 (20%): inconclusive"), nil},
		{"the next step after a pass", step1, step2,
			&transition.Event{Type: corev1.EventTypeNormal, Reason: "CanaryStep", Note: "step 2 of 2: 50% of the base's traffic to commit 0123456; step 1 (20%): pass"}},
		{"a push restarts at step 1", step2, status(knitv1alpha1.CanaryProgressing, 1, 20, other, ""),
			&transition.Event{Type: corev1.EventTypeNormal, Reason: "CanaryStep", Note: "step 1 of 2: 20% of the base's traffic to commit fedcba9"}},
		{"promoted", step2, status(knitv1alpha1.CanaryPromoted, 2, 50, head, "step 2 (50%): pass"),
			&transition.Event{Type: corev1.EventTypeNormal, Reason: "CanaryPromoted", Note: "every step passed; step 2 (50%): pass"}},
		{"still promoted", status(knitv1alpha1.CanaryPromoted, 2, 50, head, "m"), status(knitv1alpha1.CanaryPromoted, 2, 50, head, "m"), nil},
		{"rolled back", step2, status(knitv1alpha1.CanaryRolledBack, 2, 0, head, "step 2 (50%): 5xx rate 33.3%"),
			&transition.Event{Type: corev1.EventTypeWarning, Reason: "CanaryRolledBack", Note: "the head gets no traffic; step 2 (50%): 5xx rate 33.3%"}},
		{"an invalid plan", nil, status(knitv1alpha1.CanaryInvalid, 0, 0, "", "steps must rise"),
			&transition.Event{Type: corev1.EventTypeWarning, Reason: "CanaryInvalid", Note: "steps must rise"}},
		{"still invalid", status(knitv1alpha1.CanaryInvalid, 0, 0, "", "steps must rise"), status(knitv1alpha1.CanaryInvalid, 0, 0, "", "steps must rise"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, ok := canaryEvent(tc.before, tc.after)
			var got *transition.Event
			if ok {
				got = &ev
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("canaryEvent (-want +got):\n%s", diff)
			}
		})
	}
}

// A canary run through the reconciler records an Event per step and one
// for its outcome, and a resync in between records nothing.
func TestReconcileRecordsCanaryEvents(t *testing.T) {
	g := newRig(t, "knit: canary 20,50 every 10s")
	rec := events.NewFakeRecorder(10)
	g.r.events = rec
	for _, step := range []struct {
		at             time.Duration
		stable, canary canary.Snapshot
	}{
		{0, snap(0, 0), snap(0, 0)},
		{5 * time.Second, snap(0, 0), snap(0, 0)}, // a resync within step 1
		{10 * time.Second, snap(400, 0), snap(100, 0)},
		{20 * time.Second, snap(800, 0), snap(400, 100)},
		{30 * time.Second, snap(800, 0), snap(400, 100)}, // a resync after the rollback
	} {
		g.now = t0.Add(step.at)
		g.metrics["hello-abcdef0"], g.metrics["hello-pr-1-0123456"] = step.stable, step.canary
		if _, _, err := g.reconcile(t); err != nil {
			t.Fatal(err)
		}
	}
	got := reconciletest.Events(rec)
	want := []string{
		"Normal CanaryStep step 1 of 2: 20% of the base's traffic to commit 0123456",
		"Normal CanaryStep step 2 of 2: 50% of the base's traffic to commit 0123456; " +
			"step 1 (20%): 5xx rate 0.0% (0 of 100) vs stable 0.0% (0 of 400), within the 1.0 point allowance; p99 5.0 ms vs stable 5.0 ms, within 1.2 × 5.0 ms + 10 ms = 16 ms",
		"Warning CanaryRolledBack the head gets no traffic; step 2 (50%): 5xx rate 33.3% (100 of 300) vs stable 0.0% (0 of 400): over the 1.0 point allowance",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// The Canary condition mirrors the canary's phase.
func TestMarkCanary(t *testing.T) {
	type cond struct {
		Status          corev1.ConditionStatus
		Reason, Message string
	}
	tests := []struct {
		name   string
		canary knitv1alpha1.CanaryStatus
		want   cond
	}{
		{"waiting for the preview", knitv1alpha1.CanaryStatus{Phase: knitv1alpha1.CanaryProgressing, Message: "waiting for the preview to be ready"},
			cond{corev1.ConditionUnknown, knitv1alpha1.ReasonProgressing, "waiting for the preview to be ready"}},
		{"a step running", knitv1alpha1.CanaryStatus{Phase: knitv1alpha1.CanaryProgressing, Step: 1, Steps: []int64{20, 50}, Percent: 20},
			cond{corev1.ConditionUnknown, knitv1alpha1.ReasonProgressing, "step 1 of 2: 20% of traffic"}},
		{"promoted", knitv1alpha1.CanaryStatus{Phase: knitv1alpha1.CanaryPromoted, Message: "step 2 (50%): pass"},
			cond{corev1.ConditionTrue, knitv1alpha1.ReasonPromoted, "step 2 (50%): pass"}},
		{"rolled back", knitv1alpha1.CanaryStatus{Phase: knitv1alpha1.CanaryRolledBack, Message: "step 1 (20%): 5xx"},
			cond{corev1.ConditionFalse, knitv1alpha1.ReasonRolledBack, "step 1 (20%): 5xx"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s knitv1alpha1.PullRequestStatus
			markCanary(&s, &tc.canary)
			c := s.GetCondition(knitv1alpha1.PullRequestConditionCanary)
			if diff := cmp.Diff(tc.want, cond{c.Status, c.Reason, c.Message}); diff != "" {
				t.Errorf("Canary (-want +got):\n%s", diff)
			}
		})
	}
}
