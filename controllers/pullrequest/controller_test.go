package pullrequest

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// TestWatchPredicates: a PullRequest is woken by what its status is
// computed from, and not by the rest of its repository's and Services'
// status.
func TestWatchPredicates(t *testing.T) {
	repo := &knitv1alpha1.GitRepository{}
	repo.Status.Branches = []knitv1alpha1.BranchStatus{{Name: "main"}}
	svc := &servingv1.Service{}
	tests := []struct {
		name   string
		p      predicate.Predicate
		old    client.Object
		change func(client.Object)
		want   bool
	}{
		{"repository preview", previewsChanged, repo, func(o client.Object) {
			o.(*knitv1alpha1.GitRepository).Status.Previews = []knitv1alpha1.PreviewStatus{{Number: 1, Phase: knitv1alpha1.PreviewReady}}
		}, true},
		{"repository spec", previewsChanged, repo, func(o client.Object) { o.SetGeneration(2) }, true},
		{"repository branch failed", previewsChanged, repo, func(o client.Object) { o.(*knitv1alpha1.GitRepository).Status.Branches[0].Error = "bad YAML" }, true},
		{"repository inventory", previewsChanged, repo, func(o client.Object) {
			o.(*knitv1alpha1.GitRepository).Status.Inventory = []knitv1alpha1.ObjectReference{{Kind: "Service", Name: "hello"}}
		}, false},
		{"service traffic", trafficChanged, svc, func(o client.Object) {
			o.(*servingv1.Service).Status.Traffic = []servingv1.TrafficTarget{{Tag: "pr-1", URL: "http://pr-1"}}
		}, true},
		{"service latest revision", trafficChanged, svc, func(o client.Object) { o.(*servingv1.Service).Status.LatestCreatedRevisionName = "hello-abc" }, false},
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
}
