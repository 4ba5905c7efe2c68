//go:build !unit

package servingtest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// A Revision that becomes ready records one Normal RevisionReady Event,
// its Route and Service one RouteReady and ServiceReady; the next
// Revision, whose app crashes, records one Warning RevisionFailed with the
// crash's reason, and the Service a Warning ServiceFailed. They are read
// back through the events.k8s.io API, as `kubectl describe` reads them,
// and none was recorded twice (a repeat would have made it a series).
func TestTransitionsRecordEvents(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	if err := k8s.Create(ctx, helloService(ns, "hello", "World")); err != nil {
		t.Fatal(err)
	}
	runReplicas(t, ns, "hello-00001", 41801)
	eventually(t, "Service Ready", func(ctx context.Context) (bool, string) {
		svc, err := getService(ctx, ns, "hello")
		if err != nil {
			return false, err.Error()
		}
		return readyCondition(&svc.Status.Status)
	})
	updateService(t, ns, "hello", func(svc *servingv1.Service) {
		svc.Spec.Template.Spec.Containers[0].Env[0].Value = "crash"
	})
	failReplicas(t, ns, "hello-00002", "CrashLoopBackOff", "back-off 10s restarting failed container")

	want := map[string][]recorded{
		"Revision/hello-00001": {{corev1.EventTypeNormal, "RevisionReady", "Deploy", "knit-revision"}},
		"Revision/hello-00002": {{corev1.EventTypeWarning, "RevisionFailed", "Deploy", "knit-revision"}},
		"Route/hello":          {{corev1.EventTypeNormal, "RouteReady", "Route", "knit-route"}},
		"Service/hello":        {{corev1.EventTypeNormal, "ServiceReady", "Reconcile", "knit-service"}, {corev1.EventTypeWarning, "ServiceFailed", "Reconcile", "knit-service"}},
	}
	var list eventsv1.EventList
	eventually(t, "the Events of the Service's transitions", func(ctx context.Context) (bool, string) {
		if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		got := map[string][]recorded{}
		for _, e := range list.Items {
			if strings.HasPrefix(e.ReportingController, "knit-") {
				key := e.Regarding.Kind + "/" + e.Regarding.Name
				got[key] = append(got[key], recorded{e.Type, e.Reason, e.Action, e.ReportingController})
			}
		}
		for _, events := range got {
			// Normal before Warning, as want lists them.
			slices.SortFunc(events, func(a, b recorded) int { return strings.Compare(a.Type, b.Type) })
		}
		diff := cmp.Diff(want, got)
		return diff == "", "events (-want +got):\n" + diff
	})
	for _, e := range list.Items {
		if e.Series != nil {
			t.Errorf("%s %s of %s/%s recorded %d times, want once: on the transition only", e.Type, e.Reason, e.Regarding.Kind, e.Regarding.Name, e.Series.Count)
		}
		switch e.Reason {
		case "RevisionFailed":
			if e.Note != "CrashLoopBackOff: back-off 10s restarting failed container" {
				t.Errorf("RevisionFailed note = %q, want the crash's reason and message", e.Note)
			}
		case "ServiceFailed":
			if !strings.HasPrefix(e.Note, servingv1.ReasonRevisionFailed+`: Revision "hello-00002" failed`) {
				t.Errorf("ServiceFailed note = %q, want the Configuration's reason and message", e.Note)
			}
		}
	}
}

// recorded is what the test compares of an Event.
type recorded struct{ Type, Reason, Action, Controller string }
