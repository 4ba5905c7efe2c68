package announce

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/api"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/egress"
	"github.com/knitops/knit/gitsync/events"
)

// An EventSink pointing where the egress policy refuses (etcd on loopback,
// the metadata service) says so on its Ready condition, with the reason
// EgressDenied and how an operator allows it; one the operator allowed,
// and one elsewhere, are Ready.
func TestSinkRefusedByEgressPolicy(t *testing.T) {
	allowed, err := egress.ParseRules("127.0.0.1:9000")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		uri    string
		ready  bool
		reason string
	}{
		{"http://127.0.0.1:2379/v3/kv/range", false, ReasonEgressDenied},
		{"http://169.254.169.254/latest/meta-data/", false, ReasonEgressDenied},
		{"http://localhost:8443/validate", false, ReasonEgressDenied}, // refused once resolved
		{"http://127.0.0.1:9000/events", true, ""},                    // allowed by the operator
		{"https://hooks.example.com/knit", true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.uri, func(t *testing.T) {
			scheme, err := api.NewScheme()
			if err != nil {
				t.Fatal(err)
			}
			es := &knitv1alpha1.EventSink{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "sink"},
				Spec: knitv1alpha1.EventSinkSpec{URI: tc.uri}}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(es).WithStatusSubresource(es).Build()
			d, err := events.NewDispatcher(events.Options{Egress: func() *egress.Policy { return &egress.Policy{Allow: allowed} }})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close(context.Background()) })
			r := &sinksReconciler{a: New(c, d)}
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(es)}); err != nil {
				t.Fatal(err)
			}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(es), es); err != nil {
				t.Fatal(err)
			}
			ready := es.Status.GetCondition(duckv1.ConditionReady)
			if ready.IsTrue() != tc.ready || ready.Reason != tc.reason {
				t.Errorf("Ready = %s %s %q, want ready %v reason %q", ready.Status, ready.Reason, ready.Message, tc.ready, tc.reason)
			}
			t.Logf("%s: %s", ready.Reason, ready.Message)
		})
	}
}
