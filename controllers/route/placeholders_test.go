//go:build !unit

package route

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// testInternalIngress is where the suite's placeholder Services point.
const testInternalIngress = "knit-ingress-internal.knit-system.svc.cluster.local"

// Every Route gets a placeholder Service of its name, and each tag one of
// its own, pointing at the ingress's internal listener, so
// <route>.<ns>.svc.cluster.local resolves inside the cluster; a tag
// labelled cluster-local makes that tag private alone; a tag removed
// takes its Service with it; a name taken by a Service the Route
// does not own says so on the Route.
func TestPlaceholderServices(t *testing.T) {
	k8s, _ := startRoutes(t)
	ctx := context.Background()
	const ns = "placeholders"
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	createService(t, k8s, ns, "hello")
	placeholder := func(name string) (bool, string) {
		svc := &corev1.Service{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
			return false, err.Error()
		}
		owner := metav1.GetControllerOf(svc)
		return svc.Spec.Type == corev1.ServiceTypeExternalName && svc.Spec.ExternalName == testInternalIngress &&
			owner != nil && owner.Kind == "Route" && owner.Name == "hello", fmt.Sprintf("%+v %+v", svc.Spec, owner)
	}
	eventually(t, "Service hello, the Route's placeholder", func(context.Context) (bool, string) { return placeholder("hello") })

	// The reconciler writes the Route's status meanwhile: a conflict
	// reads it again.
	setTraffic := func(traffic func([]servingv1.TrafficTarget) []servingv1.TrafficTarget) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			rt := &servingv1.Route{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, rt); err != nil {
				return err
			}
			rt.Spec.Traffic = traffic(rt.Spec.Traffic)
			return k8s.Update(ctx, rt)
		}); err != nil {
			t.Fatal(err)
		}
	}
	setTraffic(func([]servingv1.TrafficTarget) []servingv1.TrafficTarget {
		return []servingv1.TrafficTarget{
			{ConfigurationName: "hello", LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)},
			{RevisionName: "hello-00001", Tag: "old", Percent: ptr.To[int64](0)},
		}
	})
	eventually(t, "Service old-hello, the tag's placeholder", func(context.Context) (bool, string) { return placeholder("old-hello") })

	// A tag made private on its own: its Service labelled cluster-local.
	tagSvc := &corev1.Service{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "old-hello"}, tagSvc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(tagSvc.DeepCopy())
	tagSvc.Labels[servingv1.VisibilityLabelKey] = "cluster-local"
	if err := k8s.Patch(ctx, tagSvc, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the private tag's URL in-cluster, the Route's still public", func(ctx context.Context) (bool, string) {
		rt := &servingv1.Route{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, rt); err != nil {
			return false, err.Error()
		}
		for _, tt := range rt.Status.Traffic {
			if tt.Tag == "old" {
				return tt.URL == "http://old-hello."+ns+".svc.cluster.local" && rt.Status.URL == "http://hello."+ns+".localhost:8080",
					fmt.Sprintf("url %s, tag %s", rt.Status.URL, tt.URL)
			}
		}
		return false, fmt.Sprintf("no tag in %+v", rt.Status.Traffic)
	})

	setTraffic(func(tt []servingv1.TrafficTarget) []servingv1.TrafficTarget { return tt[:1] })
	eventually(t, "the removed tag's Service deleted", func(ctx context.Context) (bool, string) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "old-hello"}, &corev1.Service{})
		return client.IgnoreNotFound(err) == nil && err != nil, fmt.Sprint(err)
	})

	squat := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	if err := k8s.Create(ctx, squat); err != nil {
		t.Fatal(err)
	}
	createService(t, k8s, ns, "taken")
	eventually(t, "Route taken says its name is taken", func(ctx context.Context) (bool, string) {
		rt := &servingv1.Route{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "taken"}, rt); err != nil {
			return false, err.Error()
		}
		c := rt.Status.GetCondition(servingv1.RouteConditionIngressReady)
		return c.IsFalse() && c.Reason == "NotOwned", fmt.Sprintf("%+v", c)
	})
}
