package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

func TestPrintStatusSaysWhereTheCanaryStands(t *testing.T) {
	pr := &knitv1alpha1.PullRequest{Spec: knitv1alpha1.PullRequestSpec{Repository: "hello", Number: 3, HeadBranch: "bad", BaseBranch: "main",
		State: knitv1alpha1.PullRequestOpen, Title: "Orders are broken"}}
	pr.Status.URL, pr.Status.RevisionName, pr.Status.BaseService = "http://pr-3-hello.default.localhost:8080", "hello-pr-3-abc1234", "hello"
	pr.Status.Conditions = duckv1.Conditions{
		{Type: duckv1.ConditionReady, Status: corev1.ConditionTrue},
		{Type: knitv1alpha1.PullRequestConditionForgeReported, Status: corev1.ConditionFalse, Reason: "ForgeError", Message: "set knit/preview: 502"},
	}
	pr.Status.Canary = &knitv1alpha1.CanaryStatus{Source: "description", Steps: []int64{20, 50}, Interval: metav1.Duration{Duration: 8 * time.Second},
		Commit: "abc", Phase: knitv1alpha1.CanaryRolledBack, Step: 1, Percent: 0, Verdict: "Fail", Message: "step 1 (20%): 5xx rate 50.0%"}
	var out bytes.Buffer
	printStatus(&out, pr)
	for _, want := range []string{
		"hello#3 bad → main (open)", "Orders are broken", "http://pr-3-hello.default.localhost:8080", "0% of hello's traffic",
		"RolledBack, step 1 of [20 50] every 8s (from the description)", "Fail step 1 (20%): 5xx rate 50.0%", "False ForgeError set knit/preview: 502",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("knit pr status lacks %q:\n%s", want, out.String())
		}
	}
}
