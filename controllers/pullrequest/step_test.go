package pullrequest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/canary"
)

var (
	t0     = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	steps  = canaryPlan{source: "description", Plan: canary.Plan{Steps: []int64{10, 50}, Interval: time.Minute}}
	atTime = func(d time.Duration) *metav1.Time { return &metav1.Time{Time: t0.Add(d)} }
)

func running(step int32, percent int64, started time.Duration) *knitv1alpha1.CanaryStatus {
	return &knitv1alpha1.CanaryStatus{
		Source: "description", Steps: []int64{10, 50}, Interval: metav1.Duration{Duration: time.Minute},
		Commit: "abc", Phase: knitv1alpha1.CanaryProgressing, Step: step, Percent: percent, StepStarted: atTime(started),
	}
}

func TestStart(t *testing.T) {
	tests := []struct {
		name   string
		cur    *knitv1alpha1.CanaryStatus
		commit string
		ready  bool
		want   *knitv1alpha1.CanaryStatus
	}{
		{"no preview yet: nothing runs, the head gets nothing", nil, "abc", false, &knitv1alpha1.CanaryStatus{
			Source: "description", Steps: []int64{10, 50}, Interval: metav1.Duration{Duration: time.Minute}, Commit: "abc",
			Phase: knitv1alpha1.CanaryProgressing, Message: "waiting for the preview to be ready"}},
		{"preview ready: step 1 starts now", nil, "abc", true, running(1, 10, 0)},
		{"already running on this commit: kept", running(2, 50, -30*time.Second), "abc", true, running(2, 50, -30*time.Second)},
		{"a new push restarts at step 1", running(2, 50, -30*time.Second), "def", true, func() *knitv1alpha1.CanaryStatus {
			c := running(1, 10, 0)
			c.Commit = "def"
			return c
		}()},
		{"rolled back stays rolled back on the same commit", &knitv1alpha1.CanaryStatus{Source: "description", Steps: []int64{10, 50},
			Interval: metav1.Duration{Duration: time.Minute}, Commit: "abc", Phase: knitv1alpha1.CanaryRolledBack},
			"abc", true, &knitv1alpha1.CanaryStatus{Source: "description", Steps: []int64{10, 50},
				Interval: metav1.Duration{Duration: time.Minute}, Commit: "abc", Phase: knitv1alpha1.CanaryRolledBack}},
		{"a changed plan restarts", func() *knitv1alpha1.CanaryStatus { c := running(2, 50, 0); c.Steps = []int64{5, 50}; return c }(),
			"abc", true, running(1, 10, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, start(tt.cur, steps, tt.commit, tt.ready, t0)); diff != "" {
				t.Errorf("start (-want +got):\n%s", diff)
			}
		})
	}
}
