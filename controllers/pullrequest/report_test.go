package pullrequest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

func prWith(ready corev1.ConditionStatus, msg string, canary *knitv1alpha1.CanaryStatus) *knitv1alpha1.PullRequest {
	pr := &knitv1alpha1.PullRequest{}
	pr.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: ready, Message: msg}}
	pr.Status.URL, pr.Status.RevisionName, pr.Status.BaseService = "http://pr-1-hello.default.localhost:8080", "hello-pr-1-abc1234", "hello"
	pr.Status.Canary = canary
	return pr
}

func TestDesiredReport(t *testing.T) {
	promoted := running(2, 50, 0)
	promoted.Phase, promoted.Verdict = knitv1alpha1.CanaryPromoted, "Pass"
	rolledBack := running(2, 0, 0)
	rolledBack.Phase, rolledBack.Message = knitv1alpha1.CanaryRolledBack, "step 2 (50%): 5xx rate 12.0% (6 of 50)"
	tests := []struct {
		name            string
		pr              *knitv1alpha1.PullRequest
		preview, canary status
		inComment       []string
	}{
		{"deploying", prWith(corev1.ConditionUnknown, "", nil),
			status{state: statePending, description: "Deploying the preview"}, status{}, []string{"is deploying", "`abc1234def`"}},
		{"ready: the preview URL is the status' target", prWith(corev1.ConditionTrue, "", nil),
			status{state: stateSuccess, description: "Preview ready: hello-pr-1-abc1234", targetURL: "http://pr-1-hello.default.localhost:8080"},
			status{}, []string{"is ready: http://pr-1-hello.default.localhost:8080", "`hello-pr-1-abc1234`"}},
		{"ready, a preview Service of its own: its URL is the description", func() *knitv1alpha1.PullRequest {
			pr := prWith(corev1.ConditionTrue, "", nil)
			pr.Status.RevisionName = ""
			return pr
		}(), status{state: stateSuccess, description: "Preview ready: http://pr-1-hello.default.localhost:8080", targetURL: "http://pr-1-hello.default.localhost:8080"},
			status{}, []string{"is ready: http://pr-1-hello.default.localhost:8080"}},
		{"failed: the reason is the description", prWith(corev1.ConditionFalse, "preview Revision hello-pr-1 failed: CrashLoopBackOff", nil),
			status{state: stateFailure, description: "preview Revision hello-pr-1 failed: CrashLoopBackOff"}, status{}, []string{"failed: preview Revision"}},
		{"canary running", prWith(corev1.ConditionTrue, "", running(1, 10, 0)), status{state: stateSuccess,
			description: "Preview ready: hello-pr-1-abc1234", targetURL: "http://pr-1-hello.default.localhost:8080"},
			status{state: statePending, description: "Step 1 of 2: 10% of traffic"}, []string{"Progressing, step 1 of 2 (10% → 50% every 1m0s), 10% of traffic now"}},
		{"canary promoted", prWith(corev1.ConditionTrue, "", promoted), status{state: stateSuccess,
			description: "Preview ready: hello-pr-1-abc1234", targetURL: "http://pr-1-hello.default.localhost:8080"},
			status{state: stateSuccess, description: "All 2 steps passed (50% of traffic)"}, []string{"Promoted", "last verdict Pass"}},
		{"canary rolled back: the numbers are on the PR", prWith(corev1.ConditionTrue, "", rolledBack), status{state: stateSuccess,
			description: "Preview ready: hello-pr-1-abc1234", targetURL: "http://pr-1-hello.default.localhost:8080"},
			status{state: stateFailure, description: "Rolled back: step 2 (50%): 5xx rate 12.0% (6 of 50)"}, []string{"| Last analysis | step 2 (50%): 5xx rate 12.0% (6 of 50) |"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := desiredReport(tt.pr, "abc1234def")
			if diff := cmp.Diff(tt.preview, r.preview, cmp.AllowUnexported(status{})); diff != "" {
				t.Errorf("preview status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.canary, r.canary, cmp.AllowUnexported(status{})); diff != "" {
				t.Errorf("canary status (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(r.comment, commentMarker) {
				t.Errorf("comment does not start with the marker knit finds it by:\n%s", r.comment)
			}
			for _, want := range tt.inComment {
				if !strings.Contains(r.comment, want) {
					t.Errorf("comment lacks %q:\n%s", want, r.comment)
				}
			}
		})
	}
}

func TestClipKeepsRunesWhole(t *testing.T) {
	if got := clip(strings.Repeat("é", 200), 140); len([]rune(got)) != 140 || !strings.HasSuffix(got, "…") {
		t.Errorf("clip = %q (%d runes)", got, len([]rune(got)))
	}
	if got := clip("short", 140); got != "short" {
		t.Errorf("clip(short) = %q", got)
	}
}
