package activator

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	"github.com/knitops/knit/internal/names"
)

// privateOf is rev's private Service and the labels its SKS gives it.
func privateOf(rev types.NamespacedName) (types.NamespacedName, map[string]string) {
	return types.NamespacedName{Namespace: rev.Namespace, Name: names.PrivateService(rev.Name)}, map[string]string{
		networkingv1alpha1.ServerlessServiceLabelKey: rev.Name,
		networkingv1alpha1.ServiceTypeLabelKey:       networkingv1alpha1.ServiceTypePrivate,
	}
}

// sliceAt is a slice with one endpoint at the host:port addr.
func sliceAt(t *testing.T, addr string, ready bool) discoveryv1.EndpointSlice {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return slice(map[string]int32{"http": int32(p)}, ep(host, ptr.To(ready)))
}

// A replica announced ahead of its slice takes the waiting request as
// soon as its queue-proxy answers, though no slice ever listed it.
func TestAnnouncedReplicaServesBeforeItsSlice(t *testing.T) {
	q := newFakeQueue(t, false, reply("announced"))
	a, url := startActivator(t, Options{})
	a.update(rev, revisionConfig{wait: time.Minute}, endpointSet{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pending := sendAsync(ctx, newClient(t), url, rev)
	eventually(t, "the request to wait", waitingIs(t, a, 1))

	svc, labels := privateOf(rev)
	a.ExpectSlices(svc, labels, []discoveryv1.EndpointSlice{sliceAt(t, q.addr(), false)})
	eventually(t, "probes of the announced replica", func() bool { return q.probes.Load() >= 1 })
	q.ready.Store(true)
	if res := receive(t, pending, "the response"); res.status != http.StatusOK || res.body != "announced" {
		t.Fatalf("got %v, want 200 from the announced replica", res)
	}
}

// An announcement withdrawn (the runtime's next slices leave the replica
// out) takes the replica out of traffic at once; one for another Service
// is none.
func TestWithdrawnAnnouncementTakesNoTraffic(t *testing.T) {
	q := newFakeQueue(t, true, reply("q"))
	a, _ := startActivator(t, Options{})
	a.update(rev, revisionConfig{wait: time.Minute}, endpointSet{})
	svc, labels := privateOf(rev)
	a.ExpectSlices(svc, labels, []discoveryv1.EndpointSlice{sliceAt(t, q.addr(), true)})
	eventually(t, "the announced replica ready", readyIs(t, a, 1))
	a.ExpectSlices(svc, labels, nil)
	if _, _, ready := counts(t, a, rev); ready != 0 {
		t.Fatalf("ready = %d after the announcement was withdrawn, want 0", ready)
	}

	public := types.NamespacedName{Namespace: rev.Namespace, Name: rev.Name}
	a.ExpectSlices(public, map[string]string{networkingv1alpha1.ServerlessServiceLabelKey: rev.Name}, []discoveryv1.EndpointSlice{sliceAt(t, q.addr(), true)})
	time.Sleep(50 * time.Millisecond) // ten fast probes' time
	if n := q.probes.Load(); n != 1 {
		t.Fatalf("the public Service's announcement was probed: %d probes in all, want the 1 of the private one", n)
	}
}

func TestPrivateServiceRevision(t *testing.T) {
	private := map[string]string{networkingv1alpha1.ServerlessServiceLabelKey: "hello-00001", networkingv1alpha1.ServiceTypeLabelKey: networkingv1alpha1.ServiceTypePrivate}
	public := map[string]string{networkingv1alpha1.ServerlessServiceLabelKey: "hello-00001", networkingv1alpha1.ServiceTypeLabelKey: networkingv1alpha1.ServiceTypePublic}
	for _, tc := range []struct {
		name   string
		svc    string
		labels map[string]string
		ok     bool
	}{
		{"the SKS's private Service", "hello-00001-private", private, true},
		{"the public one", "hello-00001", public, false},
		{"private labels on another name", "squatter", private, false},
		{"no labels", "hello-00001-private", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := privateServiceRevision(types.NamespacedName{Namespace: "ns", Name: tc.svc}, tc.labels)
			if ok != tc.ok || (ok && got != (types.NamespacedName{Namespace: "ns", Name: "hello-00001"})) {
				t.Fatalf("privateServiceRevision = %v, %v; want ns/hello-00001, %v", got, ok, tc.ok)
			}
		})
	}
}

// Announcements count until expectedFor has passed.
func TestAnnouncementsExpire(t *testing.T) {
	now := time.Now()
	other := types.NamespacedName{Namespace: "default", Name: "other"}
	e := &expected{bySvc: map[types.NamespacedName]announced{
		{Namespace: "default", Name: "a"}: {rev: rev, addrs: []string{"10.0.0.1:8012"}, until: now.Add(time.Second)},
		{Namespace: "default", Name: "b"}: {rev: rev, addrs: []string{"10.0.0.2:8012"}, until: now},
		{Namespace: "default", Name: "c"}: {rev: other, addrs: []string{"10.0.0.3:8012"}, until: now.Add(time.Second)},
	}}
	if diff := cmp.Diff([]string{"10.0.0.1:8012"}, e.announcedFor(rev, now)); diff != "" {
		t.Errorf("announcedFor (-want +got):\n%s", diff)
	}
	if len(e.bySvc) != 2 {
		t.Errorf("%d announcements kept, want the expired one dropped", len(e.bySvc))
	}
	if got := e.announcedFor(rev, now.Add(time.Second)); len(got) != 0 {
		t.Errorf("announcedFor after expiry = %v, want none", got)
	}
}

func TestWithAnnounced(t *testing.T) {
	eps := endpointSet{ready: []string{"a:1"}, notReady: []string{"c:1"}}
	got := eps.withAnnounced([]string{"a:1", "b:1", "c:1", "b:1"})
	want := endpointSet{ready: []string{"a:1"}, notReady: []string{"b:1", "c:1"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(endpointSet{})); diff != "" {
		t.Errorf("withAnnounced (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c:1"}, eps.notReady); diff != "" {
		t.Errorf("withAnnounced changed its receiver (-want +got):\n%s", diff)
	}
}
