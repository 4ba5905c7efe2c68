package route

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/api"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/route/resources"
)

// TestReconcileRollout: one reconcile of a Route following Configuration
// hello, which serves hello-00001 while hello-00002 became its latest
// ready Revision.
func TestReconcileRollout(t *testing.T) {
	served := func(revs ...any) []servingv1.TrafficTarget {
		var out []servingv1.TrafficTarget
		for i := 0; i < len(revs); i += 2 {
			out = append(out, servingv1.TrafficTarget{RevisionName: revs[i].(string), LatestRevision: ptr.To(true), Percent: ptr.To(int64(revs[i+1].(int)))})
		}
		return out
	}
	midway := `{"configurations":[{"configurationName":"hello","percent":100,"revisions":[{"revisionName":"hello-00001","percent":50},{"revisionName":"hello-00002","percent":50}],"stepParams":{"starttime":1,"stepSize":50,"stepDuration":1000000000,"nextStepTime":2}}]}`
	tests := []struct {
		name        string
		annotations map[string]string // the Route's
		network     map[string]string
		status      []servingv1.TrafficTarget
		state       string // the rollout annotation in status
		ingress     IngressState
		want        []servingv1.TrafficTarget
		wantState   bool // a rollout state left in status
		wantTimed   bool // its steps timed
		wantRequeue bool
	}{{
		name:   "no rollout duration: at once",
		status: served("hello-00001", 100),
		want:   served("hello-00002", 100),
	}, {
		name:        "the Route's duration: 1%, timed at once when no ingress is waited for",
		annotations: map[string]string{config.RolloutDurationAnnotation: "4s"},
		status:      served("hello-00001", 100),
		want:        served("hello-00001", 99, "hello-00002", 1),
		wantState:   true, wantTimed: true, wantRequeue: true,
	}, {
		name:      "config-network's duration; the ingress has not served the 1% yet",
		network:   map[string]string{"rollout-duration": "4"},
		status:    served("hello-00001", 100),
		ingress:   loadedIngress{},
		want:      served("hello-00001", 99, "hello-00002", 1),
		wantState: true, wantRequeue: true,
	}, {
		name:        "a due step that completes the rollout drops the state",
		annotations: map[string]string{config.RolloutDurationAnnotation: "4s"},
		status:      served("hello-00001", 50, "hello-00002", 50),
		state:       midway,
		want:        served("hello-00002", 100),
	}, {
		name:        "a corrupt state is discarded: the new Revision takes its share at once",
		annotations: map[string]string{config.RolloutDurationAnnotation: "4s"},
		status:      served("hello-00001", 50, "hello-00002", 50),
		state:       `{"configurations":[{"configurationName":"hello","percent":100,"revisions":[{"revisionName":"hello-00001","percent":70}]}]}`,
		want:        served("hello-00002", 100),
	}, {
		name:    "duration turned off mid-rollout: at once, state dropped",
		status:  served("hello-00001", 50, "hello-00002", 50),
		state:   midway,
		ingress: nil,
		want:    served("hello-00002", 100),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scheme, err := api.NewScheme()
			if err != nil {
				t.Fatal(err)
			}
			rt := following("default", "hello", "hello")
			rt.Annotations = tc.annotations
			rt.Status.Traffic = tc.status
			if tc.state != "" {
				rt.Status.Annotations = map[string]string{resources.RolloutAnnotation: tc.state, "keep": "me"}
			}
			c := fake.NewClientBuilder().WithScheme(scheme).
				WithObjects(rt, helloConfiguration("hello-00002", "hello-00002"),
					readyRevision("hello-00001", corev1.ConditionTrue), readyRevision("hello-00002", corev1.ConditionTrue)).
				WithStatusSubresource(&servingv1.Route{}, &servingv1.Revision{}, &servingv1.Configuration{}).
				WithIndex(&servingv1.Route{}, configurationIndex, referencedConfigurations).
				WithIndex(&servingv1.Route{}, revisionIndex, referencedRevisions).
				WithIndex(&servingv1.Revision{}, routeLabelIndex, labelledRoute).Build()
			store, err := config.NewStore("localhost")
			if err != nil {
				t.Fatal(err)
			}
			if tc.network != nil {
				if err := store.Update(config.NetworkConfigName, tc.network); err != nil {
					t.Fatal(err)
				}
			}
			r := &Reconciler{client: c, config: store, urlPort: 8080, events: events.NewFakeRecorder(10), ingress: tc.ingress}
			res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "default", Name: "hello"}})
			if err != nil {
				t.Fatal(err)
			}
			got := &servingv1.Route{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(rt), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Status.Traffic); diff != "" {
				t.Errorf("status traffic (-want +got):\n%s", diff)
			}
			state := resources.ParseRollout(got.Status.Annotations[resources.RolloutAnnotation])
			if (state != nil) != tc.wantState {
				t.Errorf("rollout state %q, want one: %v", got.Status.Annotations[resources.RolloutAnnotation], tc.wantState)
			}
			if state != nil {
				if timed := state.Configurations[0].StepParams.StepDuration > 0; timed != tc.wantTimed {
					t.Errorf("rollout state %+v timed %v, want %v", state, timed, tc.wantTimed)
				}
			}
			cond := got.Status.GetCondition(servingv1.RouteConditionIngressReady)
			inRollout := cond != nil && cond.Reason == servingv1.ReasonRolloutInProgress
			if inRollout != tc.wantState {
				t.Errorf("IngressReady %+v, want RolloutInProgress: %v", cond, tc.wantState)
			}
			if tc.state != "" && got.Status.Annotations["keep"] != "me" {
				t.Errorf("other status annotations lost: %v", got.Status.Annotations)
			}
			if (res.RequeueAfter > 0) != tc.wantRequeue || res.RequeueAfter > 4*time.Second {
				t.Errorf("RequeueAfter = %v, want one: %v (at most the duration)", res.RequeueAfter, tc.wantRequeue)
			}
		})
	}
}
