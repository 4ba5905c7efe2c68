//go:build !unit

package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A scale-up hinted by the autoscaler starts a replica before the
// Deployment says so; once the Deployment's spec changes without it (the
// write never came), the spec rules again and the replica stops.
func TestHintedScaleStartsBeforeTheWrite(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	d := revisionDeployment(ns, "hinted", 0, appContainer(suiteImage(t), "/app/httpserver"))
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	seen := waitForDeployment(t, key, 30*time.Second, "seen at zero", func(d *appsv1.Deployment) bool {
		return d.Status.ObservedGeneration == d.Generation
	})

	suite.rt.HintScale(seen, 1)
	eventually(t, 30*time.Second, "a replica running on the hint alone", func() (bool, string) {
		return len(replicaPIDs(key)) > 0, fmt.Sprintf("pids %v", replicaPIDs(key))
	})
	stored := &appsv1.Deployment{}
	if err := suite.reader.Get(ctx, key, stored); err != nil {
		t.Fatal(err)
	}
	if r := ptr.Deref(stored.Spec.Replicas, 1); r != 0 {
		t.Fatalf("the stored Deployment asks for %d replicas; the test needs it at 0", r)
	}

	patch := client.MergeFrom(stored.DeepCopy())
	stored.Spec.MinReadySeconds = 1 // a new spec, still at zero
	if err := suite.client.Patch(ctx, stored, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the hinted replica stopped", func() (bool, string) {
		return len(replicaPIDs(key)) == 0, fmt.Sprintf("pids %v", replicaPIDs(key))
	})
	// A hint on a spec that is no longer the Deployment's starts nothing.
	suite.rt.HintScale(seen, 1)
	time.Sleep(time.Second)
	if pids := replicaPIDs(key); len(pids) != 0 {
		t.Fatalf("a stale hint started %v", pids)
	}
}

// Every slice the runtime writes is announced (ExpectSlices) with the
// same endpoints, and the Service's end as no slices at all.
func TestSlicesAreAnnounced(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	d := revisionDeployment(ns, "announced", 1, appContainer(suiteImage(t), "/app/httpserver"))
	create(t, d)
	svc := service(ns, "announced", map[string]string{"app": "announced"}, intstr.FromString("http"))
	create(t, svc)
	written := readySlices(t, ns, "announced", 1)[0]
	key := client.ObjectKeyFromObject(svc)
	var last []discoveryv1.EndpointSlice
	for _, a := range suite.expected.of(key) {
		if len(a) == 1 && a[0].Name == written.Name && ptr.Deref(a[0].Endpoints[0].Conditions.Ready, false) {
			last = a
		}
	}
	if last == nil || !sameSlice(&last[0], &written) {
		t.Fatalf("the ready slice written, %v, was never announced; announced: %v", written.Endpoints, suite.expected.of(key))
	}
	if err := suite.client.Delete(ctx, svc); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the Service's end announced", func() (bool, string) {
		all := suite.expected.of(key)
		return len(all[len(all)-1]) == 0, fmt.Sprintf("last announced %v", all[len(all)-1])
	})
}
