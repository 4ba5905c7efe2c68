package stepper

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
	atTime = func(d time.Duration) *metav1.Time { return &metav1.Time{Time: t0.Add(d)} }
)

func running(step int32, percent int64, started time.Duration) *knitv1alpha1.CanaryStatus {
	return &knitv1alpha1.CanaryStatus{
		Source: "description", Steps: []int64{10, 50}, Interval: metav1.Duration{Duration: time.Minute},
		Commit: "abc", Phase: knitv1alpha1.CanaryProgressing, Step: step, Percent: percent, StepStarted: atTime(started),
	}
}

func TestDue(t *testing.T) {
	inconclusive := running(1, 10, -2*time.Minute)
	inconclusive.LastAnalysis = atTime(-30 * time.Second)
	tests := []struct {
		name     string
		c        *knitv1alpha1.CanaryStatus
		wantDue  bool
		wantLeft time.Duration
	}{
		{"no canary", nil, false, 0},
		{"window running", running(1, 10, -20*time.Second), false, 40 * time.Second},
		{"window over", running(1, 10, -time.Minute), true, 0},
		{"an inconclusive analysis waits another interval", inconclusive, false, 30 * time.Second},
		{"waiting for the preview", &knitv1alpha1.CanaryStatus{Phase: knitv1alpha1.CanaryProgressing}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isDue, left := Due(tt.c, t0)
			if isDue != tt.wantDue || (!isDue && left != tt.wantLeft) {
				t.Errorf("due = %v, %s; want %v, %s", isDue, left, tt.wantDue, tt.wantLeft)
			}
		})
	}
}

func TestAdvance(t *testing.T) {
	tests := []struct {
		name string
		cur  *knitv1alpha1.CanaryStatus
		v    canary.Verdict
		want func(*knitv1alpha1.CanaryStatus)
	}{
		{"a pass moves to the next step's share", running(1, 10, -time.Minute), canary.Verdict{Result: canary.Pass, Reason: "ok"}, func(c *knitv1alpha1.CanaryStatus) {
			c.Step, c.Percent, c.StepStarted = 2, 50, atTime(0)
			c.Verdict, c.Message = "Pass", "step 1 (10%): ok"
		}},
		{"a pass of the last step promotes and keeps the share", running(2, 50, -time.Minute), canary.Verdict{Result: canary.Pass, Reason: "ok"}, func(c *knitv1alpha1.CanaryStatus) {
			c.Phase, c.StepStarted = knitv1alpha1.CanaryPromoted, nil
			c.Verdict, c.Message = "Pass", "step 2 (50%): ok"
		}},
		{"a failure rolls back to 0 % at once", running(2, 50, -time.Minute), canary.Verdict{Result: canary.Fail, Reason: "5xx rate 12%"}, func(c *knitv1alpha1.CanaryStatus) {
			c.Phase, c.Percent, c.StepStarted = knitv1alpha1.CanaryRolledBack, 0, nil
			c.Verdict, c.Message = "Fail", "step 2 (50%): 5xx rate 12%"
		}},
		{"too few requests keeps the step and its window", running(1, 10, -time.Minute), canary.Verdict{Result: canary.Inconclusive, Reason: "3 of 20 requests"}, func(c *knitv1alpha1.CanaryStatus) {
			c.Verdict, c.Message = "Inconclusive", "step 1 (10%): 3 of 20 requests"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.cur.DeepCopy()
			tt.want(want)
			want.LastAnalysis = atTime(0)
			if diff := cmp.Diff(want, Advance(tt.cur, tt.v, t0)); diff != "" {
				t.Errorf("advance (-want +got):\n%s", diff)
			}
		})
	}
}
