//go:build !unit

package route

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	revresources "github.com/knitops/knit/controllers/revision/resources"
)

// One Revision's status change reconciles the one Route that sends
// traffic to it, however many Services share its namespace: the Route
// reconciler tracks what each Route references instead of requeueing the
// namespace (before, this one change reconciled all 30 Routes).
func TestRevisionChangeReconcilesOnlyItsRoute(t *testing.T) {
	k8s, counts := startRoutes(t)
	ctx := context.Background()
	const ns, n = "crowded", 30
	for _, name := range []string{ns, barrierNamespace} {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		createService(t, k8s, ns, fmt.Sprintf("hello-%02d", i))
	}
	eventually(t, "every Route serving its Revision", func(ctx context.Context) (bool, string) {
		for i := range n {
			name := fmt.Sprintf("hello-%02d", i)
			rt := &servingv1.Route{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rt); err != nil {
				return false, err.Error()
			}
			if len(rt.Status.Traffic) != 1 || rt.Status.Traffic[0].RevisionName != name+"-00001" {
				return false, fmt.Sprintf("Route %s traffic %+v", name, rt.Status.Traffic)
			}
			rev := &servingv1.Revision{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-00001"}, rev); err != nil {
				return false, err.Error()
			}
			if rev.Labels[revresources.RoutingStateLabelKey] != "active" {
				return false, fmt.Sprintf("Revision %s labels %v", rev.Name, rev.Labels)
			}
		}
		return true, ""
	})
	settle(t, k8s, counts, ns)

	before := counts.in(ns)
	t.Logf("Route reconciles while %d Services were set up: %d", n, sum(before))
	rev := &servingv1.Revision{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-07-00001"}, rev); err != nil {
		t.Fatal(err)
	}
	rev.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: corev1.ConditionFalse, Reason: "ExitCode1", Message: "container exited"}}
	if err := k8s.Status().Update(ctx, rev); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Route hello-07 sees its Revision fail", func(ctx context.Context) (bool, string) {
		rt := &servingv1.Route{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-07"}, rt); err != nil {
			return false, err.Error()
		}
		c := rt.Status.GetCondition(servingv1.RouteConditionAllTrafficAssigned)
		return c.IsFalse() && c.Reason == "RevisionFailed", fmt.Sprintf("%+v", c)
	})
	barrier(t, k8s)

	after := counts.in(ns)
	t.Logf("Route reconciles after one Revision's status change: %d", sum(after)-sum(before))
	var reconciled []string
	for name, c := range after {
		if c > before[name] {
			reconciled = append(reconciled, name)
		}
	}
	slices.Sort(reconciled)
	t.Logf("Routes reconciled after one Revision's status change: %d of %d", len(reconciled), n)
	if diff := cmp.Diff([]string{"hello-07"}, reconciled); diff != "" {
		t.Errorf("Routes reconciled after hello-07-00001 failed (-want +got):\n%s", diff)
	}
}

// createService creates what the Service and Configuration reconcilers
// make of a Service called name: a Configuration whose latest ready
// Revision is name-00001, that Revision, ready, and a Route following the
// Configuration.
func createService(t *testing.T, k8s client.Client, ns, name string) {
	t.Helper()
	ctx := context.Background()
	rev := name + "-00001"
	cfg := &servingv1.Configuration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{servingv1.ServiceLabelKey: name}}}
	cfg.Spec.Template.Spec.Containers = []corev1.Container{{Image: "example.com/hello"}}
	if err := k8s.Create(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Status.LatestCreatedRevisionName, cfg.Status.LatestReadyRevisionName = rev, rev
	cfg.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: corev1.ConditionTrue}}
	if err := k8s.Status().Update(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	r := &servingv1.Revision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: rev, Labels: map[string]string{
		servingv1.ServiceLabelKey: name, servingv1.ConfigurationLabelKey: name, servingv1.ConfigurationGenerationLabelKey: "1",
	}}}
	r.Spec.Containers = cfg.Spec.Template.Spec.Containers
	if err := k8s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: corev1.ConditionTrue}}
	if err := k8s.Status().Update(ctx, r); err != nil {
		t.Fatal(err)
	}
	rt := &servingv1.Route{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{servingv1.ServiceLabelKey: name}},
		Spec:       servingv1.RouteSpec{Traffic: []servingv1.TrafficTarget{{ConfigurationName: name, LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}}},
	}
	if err := k8s.Create(ctx, rt); err != nil {
		t.Fatal(err)
	}
}

// barrierNamespace holds the Routes barrier creates, apart from the
// Routes under test.
const barrierNamespace = "barrier"

var barriers int

// barrier returns once the Route reconciler has worked off every request
// queued before it was called: it creates a Route elsewhere and waits for
// its first reconcile, which its one worker takes from the FIFO queue only
// after all the requests ahead of it.
func barrier(t *testing.T, k8s client.Client) {
	t.Helper()
	barriers++
	rt := &servingv1.Route{ObjectMeta: metav1.ObjectMeta{Namespace: barrierNamespace, Name: fmt.Sprintf("barrier-%d", barriers)}}
	if err := k8s.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	eventually(t, "barrier "+rt.Name+" reconciled", func(ctx context.Context) (bool, string) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(rt), rt)
		return err == nil && rt.Status.ObservedGeneration == rt.Generation, fmt.Sprint(err)
	})
}

// settle waits until a barrier passes with no Route of ns reconciled in
// the meantime: the writes that set the namespace up have all been seen.
func settle(t *testing.T, k8s client.Client, counts *counter, ns string) {
	t.Helper()
	for range 50 {
		before := counts.in(ns)
		barrier(t, k8s)
		if cmp.Equal(before, counts.in(ns)) {
			return
		}
	}
	t.Fatalf("the Routes of %s still reconcile after 50 barriers", ns)
}

func sum(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
