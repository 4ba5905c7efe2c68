//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// TestServingJourney is the serving issue's user journey: kubectl apply of
// the helloworld example answers through the ingress, a template change
// rolls out a new Revision, a 50/50 split with a tag reaches both, and
// broken apps end in Revision conditions that say what happened.
func TestServingJourney(t *testing.T) {
	d := startKnitDev(t, filepath.Join(t.TempDir(), "state"))
	c := d.client(t)
	host := "hello.default.localhost"

	if out, err := d.kubectl(t, "apply", "-f", "examples/helloworld/service.yaml"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	waitBody(t, d.httpAddr, host, "Hello World!", 3*time.Minute)

	t.Run("a template change rolls out a new revision and keeps the old", func(t *testing.T) {
		updateService(t, c, func(svc *servingv1.Service) {
			svc.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "TARGET", Value: "knit"}}
		})
		waitBody(t, d.httpAddr, host, "Hello knit!", time.Minute)
		revs := &servingv1.RevisionList{}
		if err := c.List(context.Background(), revs, client.InNamespace("default"), client.MatchingLabels{servingv1.ServiceLabelKey: "hello"}); err != nil {
			t.Fatal(err)
		}
		if len(revs.Items) != 2 {
			t.Errorf("revisions after the change = %d, want the new one and the old one", len(revs.Items))
		}
	})

	t.Run("each revision started one replica", func(t *testing.T) {
		// Routing state stays off the pod template: the Route marking a
		// Revision active used to roll out a second replica and drain the
		// first. Once hello-00002 is active, each has started exactly one.
		waitFor(t, "hello-00002 active", time.Minute, func(ctx context.Context) (bool, string) {
			rev := &servingv1.Revision{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello-00002"}, rev); err != nil {
				return false, err.Error()
			}
			return rev.Labels["serving.knative.dev/routingState"] == "active", fmt.Sprint(rev.Labels)
		})
		for _, rev := range []string{"hello-00001", "hello-00002"} {
			if got := d.replicaStarts(t, "default", rev+"-deployment"); got != 1 {
				t.Errorf("%s started %d replicas, want 1", rev, got)
			}
		}
	})

	t.Run("kubectl logs reads what a replica printed", func(t *testing.T) {
		// Through the API server, which calls knit dev's kubelet log
		// endpoint at its Node's address, as on a cluster.
		logs := d.podLogs(t, "default", servingv1.RevisionLabelKey+"=hello-00002", "user-container")
		if !strings.Contains(logs, "helloworld listening on :") {
			t.Errorf("logs of hello-00002's pod = %q, want what the app printed", logs)
		}
		out, err := d.kubectl(t, "logs", "-n", "default", "deploy/hello-00002-deployment", "-c", "user-container", "--timestamps")
		if err != nil || !regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT[\d:.]+Z .*helloworld listening on :`).MatchString(out) {
			t.Errorf("kubectl logs --timestamps deploy/hello-00002-deployment: %v\n%s", err, out)
		}
	})

	t.Run("a 50/50 split with a tag reaches both revisions", func(t *testing.T) {
		updateService(t, c, func(svc *servingv1.Service) {
			svc.Spec.Traffic = []servingv1.TrafficTarget{
				{RevisionName: "hello-00001", Percent: ptr.To[int64](50), Tag: "old"},
				{LatestRevision: ptr.To(true), Percent: ptr.To[int64](50)},
			}
		})
		waitBody(t, d.httpAddr, "old-hello.default.localhost", "Hello World!", time.Minute)
		seen := map[string]int{}
		for i := 0; i < 100; i++ {
			code, body, err := get(d.httpAddr, host)
			if err != nil || code != 200 {
				t.Fatalf("request %d: %d %q %v", i, code, body, err)
			}
			seen[body]++
		}
		if seen["Hello World!"] != 50 || seen["Hello knit!"] != 50 {
			t.Errorf("answers over 100 requests = %v, want 50 of each", seen)
		}
	})

	t.Run("kubectl shows Knative-like READY columns", func(t *testing.T) {
		out, err := d.kubectl(t, "get", "ksvc,cfg,rev,rt,kpa,sks")
		if err != nil {
			t.Fatalf("kubectl get: %v\n%s", err, out)
		}
		for _, want := range []string{"service.serving.knative.dev/hello", "revision.serving.knative.dev/hello-00002", "podautoscaler.autoscaling.internal.knative.dev/hello-00002", "serverlessservice.networking.internal.knative.dev/hello-00002", "True"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl get output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("a revision at initial-scale 0 is Ready at zero and its first request starts it", func(t *testing.T) {
		// As in Knative: once config-autoscaler allows it, a Revision at
		// initial-scale 0 is Ready without a replica (it stayed Deploying
		// forever before), and the activator starts one on demand.
		// Knative requires this before a Revision may start at zero.
		setAutoscalerConfig(t, c, map[string]string{"allow-zero-initial-scale": "true"})
		svc := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "lazy"}}
		svc.Spec.Template.Annotations = map[string]string{
			"autoscaling.knative.dev/initial-scale": "0", "autoscaling.knative.dev/min-scale": "0",
		}
		svc.Spec.Template.Spec.Containers = []corev1.Container{{Image: "ko://github.com/knitops/knit/examples/helloworld",
			Env: []corev1.EnvVar{{Name: "TARGET", Value: "lazy"}}}}
		// Admission sees the config map's edit through a watch: retry
		// until it has.
		waitFor(t, "lazy admitted", 30*time.Second, func(ctx context.Context) (bool, string) {
			err := c.Create(ctx, svc.DeepCopy())
			return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
		})
		waitFor(t, "lazy Ready", time.Minute, func(ctx context.Context) (bool, string) {
			got := &servingv1.Service{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(svc), got); err != nil {
				return false, err.Error()
			}
			return got.Status.ObservedGeneration == got.Generation && got.Status.IsReady(), fmt.Sprint(got.Status.Conditions)
		})
		if got := d.replicaStarts(t, "default", "lazy-00001-deployment"); got != 0 {
			t.Errorf("lazy started %d replicas before any request, want 0", got)
		}
		waitBody(t, d.httpAddr, "lazy.default.localhost", "Hello lazy!", time.Minute)
		if got := d.replicaStarts(t, "default", "lazy-00001-deployment"); got != 1 {
			t.Errorf("lazy started %d replicas for its first request, want 1", got)
		}
	})

	t.Run("broken apps say what happened", func(t *testing.T) {
		type brokenApp struct {
			name, image string
			command     []string
			reason      string
			message     string // a part of the message that tells the user what is wrong
		}
		cases := []brokenApp{
			{"unbuildable", "ko://github.com/knitops/knit/examples/does-not-exist", nil, "BuildFailed", "does-not-exist"},
		}
		if os.Geteuid() == 0 { // images run as root only
			busybox := busyboxImage(t)
			cases = append(cases,
				brokenApp{"crashes", busybox, []string{"/bin/sh", "-c", "echo boom >&2; exit 3"}, "CrashLoopBackOff", "boom"},
				brokenApp{"never-ready", busybox, []string{"/bin/sh", "-c", "exec sleep 600"}, "ReadinessProbeFailed", "connection refused"},
				// Nothing listens on port 1. A tag is resolved to a digest
				// when the Revision is made, and fails as Knative's does;
				// a digest is pulled as written, and fails as a kubelet's
				// pull does.
				brokenApp{"unresolvable", "127.0.0.1:1/team/app:1", nil, "ContainerMissing", "connection refused"},
				brokenApp{"unpullable", "127.0.0.1:1/team/app@sha256:" + strings.Repeat("0", 64), nil, "ErrImagePull", "connection refused"})
		}
		for _, tc := range cases {
			svc := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: tc.name}}
			svc.Spec.Template.Spec.Containers = []corev1.Container{{Image: tc.image, Command: tc.command}}
			if err := c.Create(context.Background(), svc); err != nil {
				t.Fatalf("create %s: %v", tc.name, err)
			}
			waitRevisionFailure(t, c, "default", tc.name+"-00001", tc.reason, tc.message)
		}
		code, body, _ := get(d.httpAddr, host)
		if code != 200 {
			t.Errorf("hello stopped answering while other apps failed: %d %q", code, body)
		}
	})

	t.Run("a quota refuses pods and requests beyond the machine wait, as on a cluster", func(t *testing.T) {
		ctx := context.Background()
		const ns = "quota"
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-pods"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}}}
		if err := c.Create(ctx, quota); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the quota counted", time.Minute, func(ctx context.Context) (bool, string) {
			err := c.Get(ctx, client.ObjectKeyFromObject(quota), quota)
			_, counted := quota.Status.Used[corev1.ResourcePods]
			return err == nil && counted, fmt.Sprintf("%v %+v", err, quota.Status)
		})
		svc := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "counted"}}
		svc.Spec.Template.Spec.Containers = []corev1.Container{{Image: "ko://github.com/knitops/knit/examples/helloworld"}}
		if err := c.Create(ctx, svc); err != nil {
			t.Fatal(err)
		}
		waitRevisionFailure(t, c, ns, "counted-00001", "FailedCreate", "exceeded quota")
		if err := c.Delete(ctx, quota); err != nil {
			t.Fatal(err)
		}
		waitBody(t, d.httpAddr, "counted.quota.localhost", "Hello World!", 2*time.Minute)

		huge := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "huge"}}
		huge.Spec.Template.Spec.Containers = []corev1.Container{{Image: "ko://github.com/knitops/knit/examples/helloworld",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100000")}}}}
		if err := c.Create(ctx, huge); err != nil {
			t.Fatal(err)
		}
		waitRevisionFailure(t, c, ns, "huge-00001", "Unschedulable", "Insufficient cpu")
	})
}

// waitRevisionFailure waits until the Revision is not Ready for reason,
// with message saying what.
func waitRevisionFailure(t *testing.T, c client.Client, ns, name, reason, what string) {
	t.Helper()
	waitFor(t, name+" fails with "+reason, 2*time.Minute, func(ctx context.Context) (bool, string) {
		rev := &servingv1.Revision{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rev); err != nil {
			return false, err.Error()
		}
		ready := rev.Status.GetCondition(duckv1.ConditionReady)
		if ready == nil {
			return false, "no Ready condition"
		}
		return ready.IsFalse() && ready.Reason == reason && strings.Contains(ready.Message, what), fmt.Sprintf("Ready=%s %s: %s", ready.Status, ready.Reason, ready.Message)
	})
}

// updateService re-reads and updates the hello Service until no conflict.
func updateService(t *testing.T, c client.Client, mutate func(*servingv1.Service)) {
	t.Helper()
	waitFor(t, "update Service hello", 30*time.Second, func(ctx context.Context) (bool, string) {
		svc := &servingv1.Service{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, svc); err != nil {
			return false, err.Error()
		}
		mutate(svc)
		if err := c.Update(ctx, svc); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// setAutoscalerConfig merges data into config-autoscaler (creating it),
// the way an operator edits Knative's knobs; knit reads it live.
func setAutoscalerConfig(t *testing.T, c client.Client, data map[string]string) {
	t.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "knit-system", Name: "config-autoscaler"}}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	maps.Copy(cm.Data, data)
	var err error
	if cm.ResourceVersion == "" {
		err = c.Create(ctx, cm)
	} else {
		err = c.Update(ctx, cm)
	}
	if err != nil {
		t.Fatalf("config-autoscaler: %v", err)
	}
}
