package gitrepository

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/hub"
)

func TestPredicates(t *testing.T) {
	repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	pr := &knitv1alpha1.PullRequest{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: knitv1alpha1.PullRequestSpec{CanaryPercent: 10}}
	canary := func(percent int64) *knitv1alpha1.CanaryStatus {
		return &knitv1alpha1.CanaryStatus{Commit: "abc", Phase: knitv1alpha1.CanaryProgressing, Percent: percent}
	}
	svc := &servingv1.Service{}
	rev := &servingv1.Revision{}
	ready := func(status corev1.ConditionStatus, reason string) duckv1.Conditions {
		return duckv1.Conditions{{Type: duckv1.ConditionReady, Status: status, Reason: reason}}
	}
	tests := []struct {
		name   string
		p      predicate.Predicate
		old    client.Object
		change func(client.Object)
		want   bool
	}{
		{"repository status", repositoryChanged, repo, func(o client.Object) { o.(*knitv1alpha1.GitRepository).Status.ObservedGeneration = 1 }, false},
		{"repository other annotation", repositoryChanged, repo, func(o client.Object) { o.SetAnnotations(map[string]string{"a": "b"}) }, false},
		{"repository spec", repositoryChanged, repo, func(o client.Object) { o.SetGeneration(2) }, true},
		{"repository requested-at", repositoryChanged, repo, func(o client.Object) { o.SetAnnotations(map[string]string{hub.RequestedAtAnnotation: "now"}) }, true},

		{"pull request forge report", pullRequestChanged, pr, func(o client.Object) {
			o.(*knitv1alpha1.PullRequest).Status.Reported = &knitv1alpha1.ForgeReport{Preview: "success"}
		}, false},
		{"pull request roll-up", pullRequestChanged, pr, func(o client.Object) { o.(*knitv1alpha1.PullRequest).Status.URL = "http://pr-1" }, false},
		{"pull request spec", pullRequestChanged, pr, func(o client.Object) { o.SetGeneration(2) }, true},
		{"pull request canary starts", pullRequestChanged, pr, func(o client.Object) { o.(*knitv1alpha1.PullRequest).Status.Canary = canary(20) }, true},
		{"pull request canary starts at the fixed share", pullRequestChanged, pr, func(o client.Object) { o.(*knitv1alpha1.PullRequest).Status.Canary = canary(10) }, true},

		{"service other condition", serviceChanged, svc, func(o client.Object) {
			o.(*servingv1.Service).Status.Conditions = duckv1.Conditions{{Type: servingv1.ServiceConditionRoutesReady, Status: corev1.ConditionTrue}}
		}, false},
		{"service ready", serviceChanged, svc, func(o client.Object) {
			o.(*servingv1.Service).Status.Conditions = ready(corev1.ConditionTrue, "")
		}, true},
		{"service url", serviceChanged, svc, func(o client.Object) { o.(*servingv1.Service).Status.URL = "http://hello.default.localhost" }, true},
		{"service spec", serviceChanged, svc, func(o client.Object) { o.SetGeneration(3) }, false},
		{"service status catching up with its spec", serviceChanged, svc, func(o client.Object) { o.(*servingv1.Service).Status.ObservedGeneration = 3 }, true},
		{"service latest revision", serviceChanged, svc, func(o client.Object) { o.(*servingv1.Service).Status.LatestCreatedRevisionName = "hello-abc" }, true},
		{"service traffic", serviceChanged, svc, func(o client.Object) {
			o.(*servingv1.Service).Status.Traffic = []servingv1.TrafficTarget{{Tag: "pr-1", URL: "http://pr-1"}}
		}, false},

		{"revision other condition", readinessChanged, rev, func(o client.Object) {
			o.(*servingv1.Revision).Status.Conditions = duckv1.Conditions{{Type: "Active", Status: corev1.ConditionTrue}}
		}, false},
		{"revision ready", readinessChanged, rev, func(o client.Object) { o.(*servingv1.Revision).Status.Conditions = ready(corev1.ConditionTrue, "") }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := tt.old.DeepCopyObject().(client.Object)
			tt.change(now)
			if got := tt.p.Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: now}); got != tt.want {
				t.Errorf("Update = %t, want %t", got, tt.want)
			}
		})
	}
	if labelled.Update(event.UpdateEvent{ObjectOld: rev, ObjectNew: rev}) {
		t.Error("a Revision of no repository passes")
	}
}
