//go:build !unit

package servingtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	revresources "github.com/knitops/knit/controllers/revision/resources"
	"github.com/knitops/knit/internal/names"
)

// A Revision's pod template is fixed when its Deployment is created: the
// Route marking it active, then reserve, changes its labels and the
// routingStateModified annotation, never its pods. A template change would
// make the runtime start a second replica of every new Revision and drain
// the first (seen as two replica starts ~0.3 s apart per revision).
func TestRoutingStateLeavesPodTemplateAlone(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	if err := k8s.Create(ctx, helloService(ns, "hello", "World")); err != nil {
		t.Fatal(err)
	}
	first := deployment(t, ns, "hello-00001").Spec.Template
	runReplicas(t, ns, "hello-00001", 41501)
	waitTraffic(t, ns, "hello", map[string]int64{"hello-00001": 100})
	waitRoutingState(t, ns, "hello-00001", "active")
	if diff := cmp.Diff(first, deployment(t, ns, "hello-00001").Spec.Template); diff != "" {
		t.Errorf("pod template changed when the Route made the Revision active (-created +now):\n%s", diff)
	}

	updateService(t, ns, "hello", func(svc *servingv1.Service) { svc.Spec.Template.Spec.Containers[0].Env[0].Value = "knit" })
	second := deployment(t, ns, "hello-00002").Spec.Template
	runReplicas(t, ns, "hello-00002", 41502)
	waitTraffic(t, ns, "hello", map[string]int64{"hello-00002": 100})
	waitRoutingState(t, ns, "hello-00001", "reserve")
	waitRoutingState(t, ns, "hello-00002", "active")
	if diff := cmp.Diff(first, deployment(t, ns, "hello-00001").Spec.Template); diff != "" {
		t.Errorf("pod template changed when the Revision went to reserve (-created +now):\n%s", diff)
	}
	if diff := cmp.Diff(second, deployment(t, ns, "hello-00002").Spec.Template); diff != "" {
		t.Errorf("pod template of the new Revision changed when it took the traffic (-created +now):\n%s", diff)
	}
	for _, rev := range []string{"hello-00001", "hello-00002"} {
		if a := deployment(t, ns, rev).Spec.Template.Annotations; a[revresources.RoutingStateModifiedAnnotation] != "" {
			t.Errorf("%s pod annotations = %v, want no routing state", rev, a)
		}
	}
}

// A Revision superseded before it ever served goes to reserve, and its
// PodAutoscaler takes it to zero whatever its min-scale, as Knative's
// does; the Revision serving and the newest one stay active.
func TestSupersededRevisionScalesToZero(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	svc := helloService(ns, "hello", "World")
	svc.Spec.Template.Annotations = map[string]string{"autoscaling.knative.dev/min-scale": "1"}
	if err := k8s.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	runReplicas(t, ns, "hello-00001", 41601)
	waitTraffic(t, ns, "hello", map[string]int64{"hello-00001": 100})

	updateService(t, ns, "hello", func(svc *servingv1.Service) { svc.Spec.Template.Spec.Containers[0].Env[0].Value = "never ready" })
	deployment(t, ns, "hello-00002")
	waitRoutingState(t, ns, "hello-00002", "active") // the latest created: reachable while it starts
	updateService(t, ns, "hello", func(svc *servingv1.Service) { svc.Spec.Template.Spec.Containers[0].Env[0].Value = "newest" })
	deployment(t, ns, "hello-00003")

	waitRoutingState(t, ns, "hello-00002", "reserve")
	eventually(t, "superseded Revision scaled to zero despite min-scale 1", func(ctx context.Context) (bool, string) {
		pa := &autoscalingv1alpha1.PodAutoscaler{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-00002"}, pa); err != nil {
			return false, err.Error()
		}
		dep := &appsv1.Deployment{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-00002-deployment"}, dep); err != nil {
			return false, err.Error()
		}
		return pa.Spec.Reachability == autoscalingv1alpha1.ReachabilityUnreachable && ptr.Deref(dep.Spec.Replicas, 1) == 0,
			fmt.Sprintf("reachability %q, replicas %d", pa.Spec.Reachability, ptr.Deref(dep.Spec.Replicas, 1))
	})
	waitRoutingState(t, ns, "hello-00001", "active")
	waitRoutingState(t, ns, "hello-00003", "active")
	for _, rev := range []string{"hello-00001", "hello-00003"} {
		if got := ptr.Deref(deployment(t, ns, rev).Spec.Replicas, 1); got != 1 {
			t.Errorf("%s replicas = %d, want its min-scale 1", rev, got)
		}
	}
}

// deployment waits for a Revision's Deployment and returns it.
func deployment(t *testing.T, ns, rev string) *appsv1.Deployment {
	t.Helper()
	dep := &appsv1.Deployment{}
	eventually(t, "Deployment of "+rev, func(ctx context.Context) (bool, string) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.Deployment(rev)}, dep)
		return err == nil, fmt.Sprint(err)
	})
	return dep
}

func waitRoutingState(t *testing.T, ns, rev, state string) {
	t.Helper()
	eventually(t, rev+" "+state, func(ctx context.Context) (bool, string) {
		r := &servingv1.Revision{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: rev}, r); err != nil {
			return false, err.Error()
		}
		return r.Labels[revresources.RoutingStateLabelKey] == state, fmt.Sprint(r.Labels)
	})
}
