//go:build !unit

package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A Pod the API server refuses (here PodSecurity's restricted level,
// which the app's container does not meet) never runs a process: the
// Deployment says FailedCreate with the API server's words, as the
// ReplicaSet controller does, and no Pod exists. Once the namespace's
// policy allows it, the replica starts.
func TestRefusedPodNeverRuns(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	nsObj := &corev1.Namespace{}
	if err := suite.reader.Get(ctx, types.NamespacedName{Name: ns}, nsObj); err != nil { // uncached: it was just made
		t.Fatal(err)
	}
	patch := client.MergeFrom(nsObj.DeepCopy())
	nsObj.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	if err := suite.client.Patch(ctx, nsObj, patch); err != nil {
		t.Fatal(err)
	}

	d := revisionDeployment(ns, "refused", 1, appContainer("knit://serve"))
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	got := waitForDeployment(t, key, 30*time.Second, "FailedCreate", failingWith(ReasonFailedCreate))
	if c := condition(got, appsv1.DeploymentReplicaFailure); !strings.Contains(c.Message, `violates PodSecurity "restricted`) {
		t.Errorf("ReplicaFailure message %q does not quote the API server", c.Message)
	}
	if pids := replicaPIDs(key); len(pids) != 0 {
		t.Errorf("a refused replica runs processes %v", pids)
	}
	if pods := podsOf(t, ns); len(pods) != 0 {
		t.Errorf("a refused replica has a Pod: %s", pods[0].Name)
	}

	patch = client.MergeFrom(nsObj.DeepCopy())
	delete(nsObj.Labels, "pod-security.kubernetes.io/enforce")
	if err := suite.client.Patch(ctx, nsObj, patch); err != nil {
		t.Fatal(err)
	}
	waitForDeployment(t, key, time.Minute, "available once the policy allows it", func(d *appsv1.Deployment) bool {
		return available(d) && condition(d, appsv1.DeploymentReplicaFailure) == nil
	})
}

// A Pod whose requests do not fit this machine waits as an unplaced pod
// does: Pending, PodScheduled False with the scheduler's words, no
// process. Asking for what fits runs it.
func TestUnschedulablePodWaits(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	app := appContainer("knit://serve")
	app.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100000")}
	d := revisionDeployment(ns, "huge", 1, app)
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	eventually(t, 30*time.Second, "an Unschedulable Pod", func() (bool, string) {
		pods := podsOf(t, ns)
		if len(pods) != 1 {
			return false, fmt.Sprintf("%d pods", len(pods))
		}
		p := pods[0]
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable &&
				c.Message == "0/1 nodes are available: 1 Insufficient cpu." && p.Status.Phase == corev1.PodPending {
				return true, ""
			}
		}
		return false, fmt.Sprintf("phase %s, conditions %+v", p.Status.Phase, p.Status.Conditions)
	})
	if pids := replicaPIDs(key); len(pids) != 0 {
		t.Errorf("an unscheduled replica runs processes %v", pids)
	}
	if err := suite.client.Get(ctx, key, d); err != nil {
		t.Fatal(err)
	}
	if available(d) || d.Status.ReadyReplicas != 0 {
		t.Errorf("an unscheduled replica counts as ready: %+v", d.Status)
	}

	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}
	if err := suite.client.Patch(ctx, d, patch); err != nil {
		t.Fatal(err)
	}
	waitForDeployment(t, key, time.Minute, "available once it asks for what fits", available)
}

// A namespace being deleted refuses every new Pod: a replica started
// there runs no process, and the Deployment says FailedCreate with the
// API server's words.
func TestPodInATerminatingNamespaceNeverRuns(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	d := revisionDeployment(ns, "late", 0, appContainer("knit://serve"))
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	// envtest runs no namespace controller: the namespace stays
	// Terminating, its Deployment with it.
	if err := suite.client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the namespace terminating in the cache", func() (bool, string) {
		got := &corev1.Namespace{}
		err := suite.client.Get(ctx, types.NamespacedName{Name: ns}, got)
		return err == nil && got.DeletionTimestamp != nil, fmt.Sprintf("%v, %v", err, got.DeletionTimestamp)
	})
	if err := suite.client.Get(ctx, key, d); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To[int32](1)
	if err := suite.client.Patch(ctx, d, patch); err != nil {
		t.Fatal(err)
	}
	got := waitForDeployment(t, key, 30*time.Second, "FailedCreate", failingWith(ReasonFailedCreate))
	if c := condition(got, appsv1.DeploymentReplicaFailure); !strings.Contains(c.Message, "because it is being terminated") {
		t.Errorf("ReplicaFailure message %q does not quote the API server", c.Message)
	}
	if pids := replicaPIDs(key); len(pids) != 0 {
		t.Errorf("a refused replica runs processes %v", pids)
	}
	// Nothing ever ran: a container that starts has a log.
	if logs, _ := filepath.Glob(filepath.Join(suite.state, "logs", ns, "late", "*")); len(logs) != 0 {
		t.Errorf("a refused replica's containers ran: %v", logs)
	}
}
