//go:build !unit

package servingtest

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// A Service becomes a Configuration, a Route, a Revision with its
// Deployment, PodAutoscaler and SKS, and, once the replicas run, a ready
// Service whose URL routes to that Revision.
func TestServiceRollsOutFirstRevision(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	if err := k8s.Create(ctx, helloService(ns, "hello", "World")); err != nil {
		t.Fatal(err)
	}
	runReplicas(t, ns, "hello-00001", 41001)

	eventually(t, "Service Ready", func(ctx context.Context) (bool, string) {
		svc, err := getService(ctx, ns, "hello")
		if err != nil {
			return false, err.Error()
		}
		return readyCondition(&svc.Status.Status)
	})
	svc, _ := getService(ctx, ns, "hello")
	if got, want := svc.Status.URL, "http://hello."+ns+".localhost:8080"; got != want {
		t.Errorf("Service URL = %q, want %q", got, want)
	}
	if svc.Status.LatestReadyRevisionName != "hello-00001" || svc.Status.LatestCreatedRevisionName != "hello-00001" {
		t.Errorf("latest created/ready = %q/%q, want hello-00001 for both", svc.Status.LatestCreatedRevisionName, svc.Status.LatestReadyRevisionName)
	}
	if len(svc.Status.Traffic) != 1 || svc.Status.Traffic[0].RevisionName != "hello-00001" || *svc.Status.Traffic[0].Percent != 100 {
		t.Errorf("Service traffic = %+v, want 100%% to hello-00001", svc.Status.Traffic)
	}

	rev := &servingv1.Revision{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-00001"}, rev); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{servingv1.ServiceLabelKey: "hello", servingv1.ConfigurationLabelKey: "hello", servingv1.ConfigurationGenerationLabelKey: "1", "serving.knative.dev/routingState": "active"} {
		if got := rev.Labels[k]; got != want {
			t.Errorf("Revision label %s = %q, want %q", k, got, want)
		}
	}

	dep := &appsv1.Deployment{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-00001-deployment"}, dep); err != nil {
		t.Fatal(err)
	}
	checkPodContract(t, dep.Spec.Template.Spec)

	sks := &networkingv1alpha1.ServerlessService{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-00001"}, sks); err != nil {
		t.Fatal(err)
	}
	if sks.Spec.Mode != networkingv1alpha1.SKSOperationModeServe {
		t.Errorf("SKS mode = %s, want Serve while replicas run", sks.Spec.Mode)
	}
	eventually(t, "public endpoints mirror the replica", func(ctx context.Context) (bool, string) {
		list := &discoveryv1.EndpointSliceList{}
		if err := k8s.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: "hello-00001"}); err != nil {
			return false, err.Error()
		}
		if len(list.Items) != 1 || len(list.Items[0].Ports) != 1 || *list.Items[0].Ports[0].Port != 41001 {
			return false, fmt.Sprintf("public slices: %+v", list.Items)
		}
		return true, ""
	})
	pa := &autoscalingv1alpha1.PodAutoscaler{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-00001"}, pa); err != nil {
		t.Fatal(err)
	}
	if pa.Spec.ScaleTargetRef.Name != "hello-00001-deployment" {
		t.Errorf("PodAutoscaler scales %q, want hello-00001-deployment", pa.Spec.ScaleTargetRef.Name)
	}
}

// checkPodContract: Knative's runtime contract for the app and the
// queue-proxy's configuration.
func checkPodContract(t *testing.T, pod corev1.PodSpec) {
	t.Helper()
	if len(pod.Containers) != 2 || pod.Containers[1].Name != "queue-proxy" {
		t.Fatalf("pod containers = %d, want the app and queue-proxy", len(pod.Containers))
	}
	env := func(c corev1.Container) map[string]string {
		m := map[string]string{}
		for _, e := range c.Env {
			m[e.Name] = e.Value
		}
		return m
	}
	user, queue := env(pod.Containers[0]), env(pod.Containers[1])
	for k, want := range map[string]string{"PORT": "8080", "K_SERVICE": "hello", "K_CONFIGURATION": "hello", "K_REVISION": "hello-00001", "TARGET": "World"} {
		if user[k] != want {
			t.Errorf("app env %s = %q, want %q", k, user[k], want)
		}
	}
	for k, want := range map[string]string{"QUEUE_SERVING_PORT": "8012", "USER_PORT": "8080", "CONTAINER_CONCURRENCY": "0", "REVISION_TIMEOUT_SECONDS": "300", "SERVING_REVISION": "hello-00001"} {
		if queue[k] != want {
			t.Errorf("queue-proxy env %s = %q, want %q", k, queue[k], want)
		}
	}
}

// A template change stamps a new Revision; traffic moves only once it is
// ready, and the old one stays (reserve) for rollback.
func TestTemplateChangeMovesTrafficWhenReady(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	if err := k8s.Create(ctx, helloService(ns, "hello", "World")); err != nil {
		t.Fatal(err)
	}
	runReplicas(t, ns, "hello-00001", 41101)
	waitTraffic(t, ns, "hello", map[string]int64{"hello-00001": 100})

	updateService(t, ns, "hello", func(svc *servingv1.Service) {
		svc.Spec.Template.Spec.Containers[0].Env[0].Value = "knit"
	})
	eventually(t, "second Revision stamped", func(ctx context.Context) (bool, string) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-00002"}, &servingv1.Revision{})
		return err == nil, fmt.Sprint(err)
	})
	waitTraffic(t, ns, "hello", map[string]int64{"hello-00001": 100}) // not ready yet: old keeps traffic
	runReplicas(t, ns, "hello-00002", 41102)
	waitTraffic(t, ns, "hello", map[string]int64{"hello-00002": 100})

	eventually(t, "old Revision kept in reserve", func(ctx context.Context) (bool, string) {
		old := &servingv1.Revision{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-00001"}, old); err != nil {
			return false, err.Error()
		}
		return old.Labels["serving.knative.dev/routingState"] == "reserve", fmt.Sprint(old.Labels)
	})
}

// A crashing app fails its Revision with the runtime's reason, the
// Configuration says which Revision failed, and traffic stays on the last
// good Revision.
func TestFailingRevisionKeepsLastGoodTraffic(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	if err := k8s.Create(ctx, helloService(ns, "hello", "World")); err != nil {
		t.Fatal(err)
	}
	runReplicas(t, ns, "hello-00001", 41201)
	waitTraffic(t, ns, "hello", map[string]int64{"hello-00001": 100})

	updateService(t, ns, "hello", func(svc *servingv1.Service) {
		svc.Spec.Template.Spec.Containers[0].Env[0].Value = "broken"
	})
	failReplicas(t, ns, "hello-00002", "CrashLoopBackOff", "container user-container exited with code 1: panic: boom")
	eventually(t, "Revision fails with the runtime's reason", func(ctx context.Context) (bool, string) {
		rev := &servingv1.Revision{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-00002"}, rev); err != nil {
			return false, err.Error()
		}
		c := rev.Status.GetCondition(servingv1.RevisionConditionContainerHealthy)
		r := rev.Status.GetCondition(duckv1.ConditionReady)
		return c.IsFalse() && c.Reason == "CrashLoopBackOff" && r.IsFalse(), fmt.Sprintf("%+v", rev.Status.Conditions)
	})
	eventually(t, "Service reports the failed Revision", func(ctx context.Context) (bool, string) {
		svc, err := getService(ctx, ns, "hello")
		if err != nil {
			return false, err.Error()
		}
		c := svc.Status.GetCondition(servingv1.ServiceConditionConfigurationsReady)
		return c.IsFalse() && c.Reason == "RevisionFailed", fmt.Sprintf("%+v", svc.Status.Conditions)
	})
	waitTraffic(t, ns, "hello", map[string]int64{"hello-00001": 100})
}

// Two pinned Revisions at 50/50 with a tag: status shows both and the
// tag's own URL.
func TestTrafficSplitAndTags(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	svc := helloService(ns, "hello", "World")
	if err := k8s.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	runReplicas(t, ns, "hello-00001", 41301)
	waitTraffic(t, ns, "hello", map[string]int64{"hello-00001": 100})
	updateService(t, ns, "hello", func(svc *servingv1.Service) {
		svc.Spec.Template.Spec.Containers[0].Env[0].Value = "knit"
		svc.Spec.Traffic = []servingv1.TrafficTarget{
			{RevisionName: "hello-00001", Percent: ptr.To[int64](50), Tag: "old", LatestRevision: ptr.To(false)},
			{LatestRevision: ptr.To(true), Percent: ptr.To[int64](50)},
		}
	})
	runReplicas(t, ns, "hello-00002", 41302)
	waitTraffic(t, ns, "hello", map[string]int64{"hello-00001": 50, "hello-00002": 50})
	svc, _ = getService(ctx, ns, "hello")
	var tagURL string
	for _, tt := range svc.Status.Traffic {
		if tt.Tag == "old" {
			tagURL = tt.URL
		}
	}
	if want := "http://old-hello." + ns + ".localhost:8080"; tagURL != want {
		t.Errorf("tag URL = %q, want %q", tagURL, want)
	}
}

// A Configuration of the Service's name that the Service does not own is
// never adopted; the Service says so.
func TestServiceDoesNotAdoptForeignConfiguration(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	foreign := &servingv1.Configuration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"}, Spec: helloService(ns, "x", "y").Spec.ConfigurationSpec}
	if err := k8s.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, helloService(ns, "hello", "World")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "NotOwned reported", func(ctx context.Context) (bool, string) {
		svc, err := getService(ctx, ns, "hello")
		if err != nil {
			return false, err.Error()
		}
		c := svc.Status.GetCondition(servingv1.ServiceConditionConfigurationsReady)
		return c.IsFalse() && c.Reason == "NotOwned", fmt.Sprintf("%+v", svc.Status.Conditions)
	})
}

func waitTraffic(t *testing.T, ns, name string, want map[string]int64) {
	t.Helper()
	eventually(t, fmt.Sprintf("traffic %v", want), func(ctx context.Context) (bool, string) {
		rt := &servingv1.Route{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rt); err != nil {
			return false, err.Error()
		}
		got := map[string]int64{}
		for _, tt := range rt.Status.Traffic {
			got[tt.RevisionName] += ptr.Deref(tt.Percent, 0)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return false, fmt.Sprintf("route traffic %v, conditions %+v", got, rt.Status.Conditions)
		}
		return true, ""
	})
}
