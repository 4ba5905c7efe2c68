//go:build !unit

package route

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// testInternalIngress is where the suite's placeholder Services point.
const testInternalIngress = "knit-ingress-internal.knit-system.svc.cluster.local"

// Every Route gets a placeholder Service of its name, and each tag one of
// its own, pointing at the ingress's internal listener, so
// <route>.<ns>.svc.cluster.local resolves inside the cluster; a tag
// removed takes its Service with it; a name taken by a Service the Route
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

	rt := &servingv1.Route{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, rt); err != nil {
		t.Fatal(err)
	}
	rt.Spec.Traffic = []servingv1.TrafficTarget{
		{ConfigurationName: "hello", LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)},
		{RevisionName: "hello-00001", Tag: "old", Percent: ptr.To[int64](0)},
	}
	if err := k8s.Update(ctx, rt); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Service old-hello, the tag's placeholder", func(context.Context) (bool, string) { return placeholder("old-hello") })

	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, rt); err != nil {
		t.Fatal(err)
	}
	rt.Spec.Traffic = rt.Spec.Traffic[:1]
	if err := k8s.Update(ctx, rt); err != nil {
		t.Fatal(err)
	}
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
