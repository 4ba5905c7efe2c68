//go:build !unit

package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/local/nodefit"
)

// podsOf lists the Pods in a namespace, by name.
func podsOf(t *testing.T, ns string) []corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := suite.client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return list.Items
}

// waitForPods polls the namespace's Pods until check passes.
func waitForPods(t *testing.T, ns string, timeout time.Duration, what string, check func([]corev1.Pod) bool) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	eventually(t, timeout, what, func() (bool, string) {
		pods = podsOf(t, ns)
		return check(pods), describePods(pods)
	})
	return pods
}

func describePods(pods []corev1.Pod) string {
	s := fmt.Sprintf("%d pods", len(pods))
	for _, p := range pods {
		s += fmt.Sprintf("; %s %s %+v", p.Name, p.Status.Phase, p.Status.ContainerStatuses)
	}
	return s
}

func podCondition(p *corev1.Pod, typ corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

func podReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && podCondition(p, corev1.PodReady) == corev1.ConditionTrue
}

// replicaViews are the runtime's replicas of a Deployment.
func replicaViews(key types.NamespacedName) []replicaView {
	suite.rt.mu.Lock()
	defer suite.rt.mu.Unlock()
	if st := suite.rt.deployments[key]; st != nil {
		return st.views(time.Now())
	}
	return nil
}

// TestReplicaIsPublishedAsAPod: a running replica is a Pod of the same
// name as its HOSTNAME, labelled as its template (plus
// pod-template-hash), owned by its Deployment, unscheduled, at the
// replica's address, Running and Ready with its containers' states.
// Stopping the Deployment removes its Pods.
func TestReplicaIsPublishedAsAPod(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	d := revisionDeployment(ns, "mirrored", 1, appContainer(suiteImage(t), "/app/httpserver"))
	d.Spec.Template.Annotations = map[string]string{"example.com/note": "kept"}
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	dep := waitForDeployment(t, key, 30*time.Second, "available", available)

	pods := waitForPods(t, ns, 30*time.Second, "one ready Pod", func(pods []corev1.Pod) bool {
		return len(pods) == 1 && podReady(&pods[0])
	})
	p := pods[0]
	views := replicaViews(key)
	if len(views) != 1 {
		t.Fatalf("%d replicas, want 1", len(views))
	}
	v := views[0]
	if p.Name != v.PodName {
		t.Errorf("Pod %s, want the replica's name %s", p.Name, v.PodName)
	}
	for k, want := range map[string]string{"app": "mirrored", appsv1.DefaultDeploymentUniqueLabelKey: v.Hash} {
		if got := p.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	if p.Annotations["example.com/note"] != "kept" {
		t.Errorf("annotations %v, want the template's", p.Annotations)
	}
	if owner := metav1.GetControllerOf(&p); owner == nil || owner.Kind != "Deployment" || owner.UID != dep.UID || !ptr.Deref(owner.BlockOwnerDeletion, false) {
		t.Errorf("controller %+v, want the Deployment %s", owner, dep.UID)
	}
	if p.Spec.NodeName != nodefit.Machine(nil, nil).Name || len(p.Spec.Containers) != 1 || p.Spec.Containers[0].Image != suiteImage(t) {
		t.Errorf("spec: node %q, containers %+v; want this machine's node, the template's", p.Spec.NodeName, p.Spec.Containers)
	}
	if p.Status.PodIP != v.IP || p.Status.PodIP == "" || p.Status.HostIP == "" || p.Status.StartTime == nil {
		t.Errorf("podIP %q hostIP %q startTime %v, want the replica's %q", p.Status.PodIP, p.Status.HostIP, p.Status.StartTime, v.IP)
	}
	for _, typ := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		if got := podCondition(&p, typ); got != corev1.ConditionTrue {
			t.Errorf("condition %s = %q, want True", typ, got)
		}
	}
	if cs := p.Status.ContainerStatuses; len(cs) != 1 || cs[0].Name != "user-container" || !cs[0].Ready || !ptr.Deref(cs[0].Started, false) ||
		cs[0].State.Running == nil || cs[0].RestartCount != 0 || !strings.Contains(cs[0].ImageID, "/test/app@sha256:") || !strings.HasPrefix(cs[0].ContainerID, "runc://") {
		t.Errorf("containerStatuses %+v, want user-container running and ready, its image's digest and runc container ID", cs)
	}

	if err := suite.client.Delete(ctx, dep); err != nil {
		t.Fatal(err)
	}
	waitForPods(t, ns, 30*time.Second, "no Pods once the Deployment is gone", func(pods []corev1.Pod) bool { return len(pods) == 0 })
}

// TestLivenessRestartShowsOnThePod follows Knative's TestLivenessWithFail:
// the container killed for a failing liveness probe and restarted counts
// restartCount 1, its end in lastState.terminated.
func TestLivenessRestartShowsOnThePod(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	c, unhealthy := livenessApp(t)
	d := revisionDeployment(ns, "liveness", 1, c)
	create(t, d)
	waitForPods(t, ns, 30*time.Second, "one ready Pod", func(pods []corev1.Pod) bool { return len(pods) == 1 && podReady(&pods[0]) })

	touch(t, unhealthy)
	pods := waitForPods(t, ns, 30*time.Second, "user-container restarted once", func(pods []corev1.Pod) bool {
		return len(pods) == 1 && len(pods[0].Status.ContainerStatuses) == 1 && pods[0].Status.ContainerStatuses[0].RestartCount == 1
	})
	cs := pods[0].Status.ContainerStatuses[0]
	last := cs.LastTerminationState.Terminated
	if last == nil || last.StartedAt.IsZero() || last.FinishedAt.Before(&last.StartedAt) || last.Reason == "" {
		t.Errorf("lastState %+v, want how the killed run ended", cs.LastTerminationState)
	}
	t.Logf("lastState.terminated: %+v", last)
}

// TestDeletingAPodReplacesItsReplica: `kubectl delete pod` stops that
// replica; the Deployment gets a new one, with a Pod of its own.
func TestDeletingAPodReplacesItsReplica(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	d := revisionDeployment(ns, "replaced", 1, appContainer(suiteImage(t), "/app/httpserver"))
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	first := waitForPods(t, ns, 30*time.Second, "one ready Pod", func(pods []corev1.Pod) bool { return len(pods) == 1 && podReady(&pods[0]) })[0]
	before := replicaPIDs(key)

	if err := suite.client.Delete(ctx, &first); err != nil {
		t.Fatal(err)
	}
	waitForPods(t, ns, 30*time.Second, "another ready Pod", func(pods []corev1.Pod) bool {
		return len(pods) == 1 && pods[0].Name != first.Name && podReady(&pods[0])
	})
	eventually(t, 30*time.Second, "the deleted Pod's replica stopped", func() (bool, string) {
		views := replicaViews(key)
		for _, v := range views {
			if v.PodName == first.Name {
				return false, fmt.Sprintf("%+v", views)
			}
		}
		return len(views) == 1, fmt.Sprintf("%+v", views)
	})
	if after := replicaPIDs(key); len(before) != 1 || len(after) != 1 || before[0] == after[0] {
		t.Errorf("pids %v then %v, want the process replaced", before, after)
	}
}

// TestForgetEarlierPods: Pods a Deployment owns are an earlier
// runtime's and deleted; any other Pod is left alone.
func TestForgetEarlierPods(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	d := revisionDeployment(ns, "earlier", 0, appContainer(suiteImage(t), "/app/httpserver"))
	create(t, d)
	earlier := makePod(d, "earlier-0123456789-abcde", "0123456789", "")
	mine := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "users"}, Spec: d.Spec.Template.Spec}
	for _, p := range []*corev1.Pod{earlier, mine} {
		if err := suite.client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	n, err := forgetEarlierPods(ctx, suite.reader, suite.client, client.InNamespace(ns))
	if err != nil || n != 1 {
		t.Errorf("forgetEarlierPods = %d, %v; want 1 deleted", n, err)
	}
	// The suite's client reads a cache, which sees the delete a moment
	// after it was made.
	waitForPods(t, ns, 10*time.Second, "the user's Pod alone", func(pods []corev1.Pod) bool {
		return len(pods) == 1 && pods[0].Name == "users"
	})
}
