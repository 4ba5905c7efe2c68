package gitrepository

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/forgeapi"
	"github.com/knitops/knit/gitsync/plan"
)

func TestDeployStatus(t *testing.T) {
	const head, old = "abc1234def5678", "0001112223334"
	applied := knitv1alpha1.BranchStatus{Name: "main", Commit: head, AppliedCommit: head}
	// service is hello as the Service and Revision reconcilers leave it:
	// applied from commit, its template named rev, which is ready
	// (True, False, Unknown) and, when serving, its latest ready one
	// with the Service Ready at its URL.
	service := func(name, commit, rev string, ready corev1.ConditionStatus, serving bool) deployed {
		svc := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 2,
			Annotations: map[string]string{plan.CommitAnnotation: commit}}}
		svc.Spec.Template.Name = rev
		svc.Status.LatestCreatedRevisionName = rev
		svc.Status.ObservedGeneration = 2
		r := &servingv1.Revision{ObjectMeta: metav1.ObjectMeta{Name: rev}}
		r.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: ready, Reason: "ExitCode1", Message: "container exited with code 1"}}
		if serving {
			svc.Status.LatestReadyRevisionName = rev
			svc.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: corev1.ConditionTrue}}
			svc.Status.URL = "http://" + name + ".default.localhost:8080"
		}
		return deployed{name: name, svc: svc, rev: r}
	}
	hello := "hello-abc1234"
	status := func(state forgeapi.State, description, url string) *forgeapi.Status {
		return &forgeapi.Status{Context: DeployContext, State: state, Description: description, TargetURL: url}
	}
	with := func(b knitv1alpha1.BranchStatus, change func(*knitv1alpha1.BranchStatus)) knitv1alpha1.BranchStatus {
		change(&b)
		return b
	}
	toldAs := func(commit, state string) func(*knitv1alpha1.BranchStatus) {
		return func(b *knitv1alpha1.BranchStatus) {
			b.Reported = &knitv1alpha1.DeployReport{Commit: commit, State: state}
		}
	}
	tests := []struct {
		name     string
		branch   knitv1alpha1.BranchStatus
		services []deployed
		want     *forgeapi.Status // nil: nothing to set
	}{
		{"not fetched yet: nothing", knitv1alpha1.BranchStatus{Name: "main"}, nil, nil},
		{"fetched, images still building: nothing",
			knitv1alpha1.BranchStatus{Name: "main", Commit: head, AppliedCommit: old}, []deployed{service("hello", old, "hello-0001112", corev1.ConditionTrue, true)}, nil},
		{"applied, the cache has not seen the Service yet: pending", applied, []deployed{{name: "hello"}},
			status(forgeapi.StatePending, "Deploying hello", "")},
		{"applied, the Service still holds the last commit: pending", applied, []deployed{service("hello", old, "hello-0001112", corev1.ConditionTrue, true)},
			status(forgeapi.StatePending, "Deploying hello", "")},
		{"applied, its Revision not created yet: pending", applied, []deployed{{name: "hello", svc: service("hello", head, hello, "", false).svc}},
			status(forgeapi.StatePending, "Deploying "+hello, "")},
		{"applied, its Revision not ready: pending", applied, []deployed{service("hello", head, hello, corev1.ConditionUnknown, false)},
			status(forgeapi.StatePending, "Deploying "+hello, "")},
		{"ready but not routed yet: pending", applied, []deployed{service("hello", head, hello, corev1.ConditionTrue, false)},
			status(forgeapi.StatePending, "Deploying "+hello, "")},
		{"ready and routed: success at the Service's URL", applied, []deployed{service("hello", head, hello, corev1.ConditionTrue, true)},
			status(forgeapi.StateSuccess, "Serving "+hello, "http://hello.default.localhost:8080")},
		{"a commit that kept the Revision: success once it serves", applied,
			[]deployed{service("hello", head, "hello-0001112", corev1.ConditionTrue, true)},
			status(forgeapi.StateSuccess, "Serving hello-0001112", "http://hello.default.localhost:8080")},
		{"two Services: the first's URL, once both serve", applied,
			[]deployed{service("hello", head, hello, corev1.ConditionTrue, true), service("worker", head, "worker-abc1234", corev1.ConditionTrue, true)},
			status(forgeapi.StateSuccess, "Serving hello-abc1234, worker-abc1234", "http://hello.default.localhost:8080")},
		{"two Services, one deploying: pending, naming it", applied,
			[]deployed{service("hello", head, hello, corev1.ConditionTrue, true), service("worker", head, "worker-abc1234", corev1.ConditionUnknown, false)},
			status(forgeapi.StatePending, "Deploying worker-abc1234", "")},
		{"no Services: success once applied", applied, nil, status(forgeapi.StateSuccess, "Applied; no Services to wait for", "")},
		{"its Revision failed: failure with why", applied,
			[]deployed{service("hello", head, hello, corev1.ConditionTrue, true), service("worker", head, "worker-abc1234", corev1.ConditionFalse, false)},
			status(forgeapi.StateFailure, "worker-abc1234 failed: container exited with code 1", "")},
		{"refused: failure with the first line of the error",
			with(applied, func(b *knitv1alpha1.BranchStatus) {
				b.AppliedCommit, b.Error = old, "render: service.yaml: yaml: line 3: did not find expected node content\nmore"
			}),
			[]deployed{service("hello", old, "hello-0001112", corev1.ConditionTrue, true)},
			status(forgeapi.StateFailure, "Not deployed: render: service.yaml: yaml: line 3: did not find expected node content", "")},

		{"pending told: not again", with(applied, toldAs(head, "pending")), []deployed{service("hello", head, hello, corev1.ConditionUnknown, false)}, nil},
		{"pending told, now serving: success", with(applied, toldAs(head, "pending")), []deployed{service("hello", head, hello, corev1.ConditionTrue, true)},
			status(forgeapi.StateSuccess, "Serving "+hello, "http://hello.default.localhost:8080")},
		{"success told: not again", with(applied, toldAs(head, "success")), []deployed{service("hello", head, hello, corev1.ConditionTrue, true)}, nil},
		{"success told, the cache lags: no pending after the outcome", with(applied, toldAs(head, "success")), []deployed{{name: "hello"}}, nil},
		{"failure told: not again", with(applied, toldAs(head, "failure")), []deployed{service("hello", head, hello, corev1.ConditionFalse, false)}, nil},
		{"failure told, the Revision recovered: success", with(applied, toldAs(head, "failure")), []deployed{service("hello", head, hello, corev1.ConditionTrue, true)},
			status(forgeapi.StateSuccess, "Serving "+hello, "http://hello.default.localhost:8080")},
		{"success told for the last commit: pending for this one", with(applied, toldAs(old, "success")), []deployed{service("hello", head, hello, corev1.ConditionUnknown, false)},
			status(forgeapi.StatePending, "Deploying "+hello, "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := deployStatus(&tt.branch, tt.services)
			switch {
			case tt.want == nil && ok:
				t.Errorf("deployStatus = %+v, want nothing to set", got)
			case tt.want != nil && !ok:
				t.Errorf("deployStatus: nothing to set, want %+v", *tt.want)
			case tt.want != nil:
				if diff := cmp.Diff(*tt.want, got); diff != "" {
					t.Errorf("deployStatus (-want +got):\n%s", diff)
				}
			}
		})
	}
}
