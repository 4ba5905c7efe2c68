package rollout

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/canary"
)

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

func TestPlanFor(t *testing.T) {
	tests := []struct {
		name, annotation, repo string
		wantSource             string
		wantOK                 bool
		wantSteps              []int64
		wantErr                string
	}{
		{name: "neither asks"},
		{name: "the repository's default", repo: "10,50 every 1m", wantSource: SourceRepository, wantOK: true, wantSteps: []int64{10, 50}},
		{name: "the annotation wins", annotation: "20 every 30s", repo: "10,50 every 1m", wantSource: SourceAnnotation, wantOK: true, wantSteps: []int64{20}},
		{name: "off opts a Service out", annotation: "off", repo: "10,50 every 1m"},
		{name: "a bad annotation names itself", annotation: "10,5 every 1m", wantErr: "annotation knit.dev/rollout"},
		{name: "a bad default names spec.rollout", repo: "every", wantErr: "spec.rollout"},
		{name: "automerge means nothing for a push", annotation: "10 every 1m automerge", wantErr: "automerge"},
		{name: "blank annotation is an error, not the default", annotation: " ", repo: "10 every 1m", wantErr: "is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, source, ok, err := PlanFor(tt.annotation, tt.repo)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || ok != tt.wantOK || source != tt.wantSource || !slices.Equal(p.Steps, tt.wantSteps) {
				t.Errorf("PlanFor = %v %q %v %v; want steps %v, %q, %v", p.Steps, source, ok, err, tt.wantSteps, tt.wantSource, tt.wantOK)
			}
		})
	}
}

func live(template, latestReady string) *servingv1.Service {
	svc := &servingv1.Service{}
	svc.Spec.Template.Name = template
	svc.Status.LatestReadyRevisionName = latestReady
	return svc
}

func push(candidate string, l *servingv1.Service) Push {
	return Push{Branch: "main", Commit: "c2", Service: "hello", Candidate: candidate, Source: SourceAnnotation,
		Plan: canary.Plan{Steps: []int64{10, 50}, Interval: time.Minute}, Live: l}
}

func waitingFor(candidate, stable string) *knitv1alpha1.RolloutStatus {
	return &knitv1alpha1.RolloutStatus{Branch: "main", Service: "hello", Revision: candidate, Stable: stable,
		CanaryStatus: knitv1alpha1.CanaryStatus{Source: SourceAnnotation, Steps: []int64{10, 50}, Interval: metav1.Duration{Duration: time.Minute},
			Commit: "c2", Phase: knitv1alpha1.CanaryProgressing, Message: "waiting for Revision " + candidate + " to be ready"}}
}

func withPhase(r *knitv1alpha1.RolloutStatus, phase knitv1alpha1.CanaryPhase) *knitv1alpha1.RolloutStatus {
	r = r.DeepCopy()
	r.Phase = phase
	return r
}

func TestBegin(t *testing.T) {
	tests := []struct {
		name string
		prev *knitv1alpha1.RolloutStatus
		push Push
		want *knitv1alpha1.RolloutStatus
	}{
		{"first deploy of the Service: all at once", nil, push("hello-c2", nil), nil},
		{"the live Service runs this template already", nil, push("hello-c1", live("hello-c1", "hello-c1")), nil},
		{"no ready Revision to fall back to", nil, push("hello-c2", live("hello-c1", "")), nil},
		{"a new Revision rolls out against the one serving", nil, push("hello-c2", live("hello-c1", "hello-c1")), waitingFor("hello-c2", "hello-c1")},
		{"the same candidate keeps its rollout", withPhase(waitingFor("hello-c2", "hello-c1"), knitv1alpha1.CanaryRolledBack),
			push("hello-c2", live("hello-c2", "hello-c2")), withPhase(waitingFor("hello-c2", "hello-c1"), knitv1alpha1.CanaryRolledBack)},
		{"a push after a rollback falls back to what served all along", withPhase(waitingFor("hello-c2", "hello-c1"), knitv1alpha1.CanaryRolledBack),
			push("hello-c3", live("hello-c2", "hello-c2")), waitingFor("hello-c3", "hello-c1")},
		{"a push in the middle of a rollout keeps its stable", waitingFor("hello-c2", "hello-c1"),
			push("hello-c3", live("hello-c2", "hello-c2")), waitingFor("hello-c3", "hello-c1")},
		{"a push after a promotion rolls out against the promoted", withPhase(waitingFor("hello-c2", "hello-c1"), knitv1alpha1.CanaryPromoted),
			push("hello-c3", live("hello-c2", "hello-c2")), waitingFor("hello-c3", "hello-c2")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Begin(tt.prev, tt.push)); diff != "" {
				t.Errorf("Begin (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProceed(t *testing.T) {
	ready := &duckv1.Condition{Type: duckv1.ConditionReady, Status: corev1.ConditionTrue}
	failed := &duckv1.Condition{Type: duckv1.ConditionReady, Status: corev1.ConditionFalse, Reason: "ExitCode1", Message: "the app exited"}
	unknown := &duckv1.Condition{Type: duckv1.ConditionReady, Status: corev1.ConditionUnknown}
	tests := []struct {
		name  string
		cur   *knitv1alpha1.RolloutStatus
		ready *duckv1.Condition
		want  func(*knitv1alpha1.RolloutStatus)
	}{
		{"not there yet: waits", waitingFor("hello-c2", "hello-c1"), nil, func(*knitv1alpha1.RolloutStatus) {}},
		{"not ready yet: waits", waitingFor("hello-c2", "hello-c1"), unknown, func(*knitv1alpha1.RolloutStatus) {}},
		{"ready: step 1 starts now", waitingFor("hello-c2", "hello-c1"), ready, func(r *knitv1alpha1.RolloutStatus) {
			r.Step, r.Percent, r.Message, r.StepStarted = 1, 10, "", &metav1.Time{Time: t0}
		}},
		{"failed: rolled back, the stable never lost its traffic", waitingFor("hello-c2", "hello-c1"), failed, func(r *knitv1alpha1.RolloutStatus) {
			r.Phase, r.Verdict, r.LastAnalysis = knitv1alpha1.CanaryRolledBack, "Fail", &metav1.Time{Time: t0}
			r.Message = "Revision hello-c2 failed: the app exited"
		}},
		{"a running step is not this function's", func() *knitv1alpha1.RolloutStatus {
			r := waitingFor("hello-c2", "hello-c1")
			r.Step, r.Percent, r.StepStarted = 2, 50, &metav1.Time{Time: t0.Add(-time.Minute)}
			return r
		}(), failed, func(*knitv1alpha1.RolloutStatus) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.cur.DeepCopy()
			tt.want(want)
			if diff := cmp.Diff(want, Proceed(tt.cur, tt.ready, t0)); diff != "" {
				t.Errorf("Proceed (-want +got):\n%s", diff)
			}
		})
	}
}
