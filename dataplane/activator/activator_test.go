package activator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestNewRejectsNegativeOptions(t *testing.T) {
	_, err := New(Options{MaxWaiting: -1})
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("New(MaxWaiting: -1) = %v, want ErrInvalidOptions", err)
	}
}

// A request for a Revision at zero pokes the autoscaler at once, waits
// while the new replica fails its probe, and is answered by it once the
// probe passes; the replica sees a ready probe before any traffic.
func TestScaleFromZero(t *testing.T) {
	rep := newFakeReporter()
	// An hour between report rounds: any poke seen comes from the request.
	a, url := startActivator(t, Options{Reporter: rep, StatsInterval: time.Hour})
	a.SetEndpoints(rev, 1, nil)

	seen := make(chan http.Header, 1)
	q := newFakeQueue(t, false, func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		w.Write([]byte("hello from the replica"))
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan response, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set(NamespaceHeader, rev.Namespace)
		req.Header.Set(RevisionHeader, rev.Name)
		req.Header.Set("X-Forwarded-For", "10.1.2.3")
		resp, err := newClient(t).Do(req)
		if err != nil {
			done <- response{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- response{status: resp.StatusCode, body: string(b), err: err}
	}()

	if got := receive(t, rep.pokes, "a poke"); got != rev {
		t.Fatalf("poked %s, want %s", got, rev)
	}
	a.SetEndpoints(rev, 1, []string{q.addr()})
	eventually(t, "two probes of the unready replica", func() bool { return q.probes.Load() >= 2 })
	if w, _, ready := counts(t, a, rev); w != 1 || ready != 0 {
		t.Fatalf("with the replica unready: waiting %d, ready %d; want 1, 0", w, ready)
	}
	q.ready.Store(true)

	res := receive(t, done, "the response")
	if res.err != nil || res.status != http.StatusOK || res.body != "hello from the replica" {
		t.Fatalf("response: %v, want 200 from the replica", res)
	}
	events := q.eventLog()
	firstReady := slices.Index(events, "probe:ready")
	firstRequest := slices.Index(events, "request")
	if firstReady < 0 || firstRequest < firstReady {
		t.Fatalf("replica saw %v; want a ready probe before the request", events)
	}
	h := receive(t, seen, "the request headers")
	if got := h.Get(proxyHeader); got != proxyValue {
		t.Errorf("%s = %q, want %q", proxyHeader, got, proxyValue)
	}
	if got := h.Get("X-Forwarded-For"); got != "10.1.2.3, 127.0.0.1" {
		t.Errorf("X-Forwarded-For = %q, want the client's list with the activator's peer appended", got)
	}
	if got := h.Get(RevisionHeader); got != rev.Name {
		t.Errorf("%s = %q, want it passed on", RevisionHeader, got)
	}
}

func TestUnknownRevision(t *testing.T) {
	a, url := startActivator(t, Options{})
	a.SetEndpoints(rev, 0, nil)
	for _, tc := range []struct {
		name   string
		key    types.NamespacedName
		status int
		body   string
	}{
		{"no headers", types.NamespacedName{}, http.StatusNotFound,
			"activator: request names no revision (headers Knative-Serving-Namespace and Knative-Serving-Revision)\n"},
		{"unknown", types.NamespacedName{Namespace: "default", Name: "nope"}, http.StatusBadGateway,
			"activator: unknown revision default/nope\n"},
		{"known name, other namespace", types.NamespacedName{Namespace: "other", Name: rev.Name}, http.StatusBadGateway,
			"activator: unknown revision other/hello\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := send(context.Background(), newClient(t), http.MethodGet, url, tc.key, "")
			if res.err != nil || res.status != tc.status || res.body != tc.body {
				t.Fatalf("got %v, want %d %q", res, tc.status, tc.body)
			}
		})
	}
}

// A full line refuses at once; a client that gives up frees its place.
func TestQueueFullAndCancelFreesThePlace(t *testing.T) {
	a, url := startActivator(t, Options{MaxWaiting: 1})
	a.SetEndpoints(rev, 1, nil)
	c := newClient(t)

	ctx1, cancel1 := context.WithCancel(context.Background())
	first := sendAsync(ctx1, c, url, rev)
	eventually(t, "the first request to wait", waitingIs(t, a, 1))

	res := send(context.Background(), c, http.MethodGet, url, rev, "")
	want := "activator: revision default/hello already has 1 requests waiting for a replica\n"
	if res.status != http.StatusServiceUnavailable || res.body != want {
		t.Fatalf("second request: %v, want 503 %q", res, want)
	}

	cancel1()
	if res := receive(t, first, "the canceled request"); res.err == nil {
		t.Fatalf("canceled request: %v, want an error", res)
	}
	eventually(t, "the canceled request to leave the line", waitingIs(t, a, 0))

	ctx3, cancel3 := context.WithCancel(context.Background())
	defer cancel3()
	third := sendAsync(ctx3, c, url, rev)
	eventually(t, "the third request to take the freed place", waitingIs(t, a, 1))
	cancel3()
	receive(t, third, "the third request")
}

func TestWaitLimit(t *testing.T) {
	t.Run("no replica", func(t *testing.T) {
		a, url := startActivator(t, Options{MaxWait: 20 * time.Millisecond})
		a.SetEndpoints(rev, 1, nil)
		res := send(context.Background(), newClient(t), http.MethodGet, url, rev, "")
		want := "activator: revision default/hello has no ready replica after 20ms\n"
		if res.status != http.StatusServiceUnavailable || res.body != want {
			t.Fatalf("got %v, want 503 %q", res, want)
		}
	})
	t.Run("replica busy", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		q := newFakeQueue(t, true, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		a, url := startActivator(t, Options{MaxWait: 20 * time.Millisecond})
		a.SetEndpoints(rev, 1, []string{q.addr()})
		eventually(t, "the replica to be ready", readyIs(t, a, 1))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		busy := sendAsync(ctx, newClient(t), url, rev)
		eventually(t, "the replica to be busy", func() bool { return q.inflight.Load() == 1 })

		res := send(context.Background(), newClient(t), http.MethodGet, url, rev, "")
		want := "activator: revision default/hello has all 1 ready replicas busy (containerConcurrency 1) after 20ms\n"
		if res.status != http.StatusServiceUnavailable || res.body != want {
			t.Fatalf("got %v, want 503 %q", res, want)
		}
		cancel()
		receive(t, busy, "the busy request")
	})
}

// A client that leaves while its request is at the replica frees the
// replica's slot for the next request.
func TestCancelInFlightFreesTheSlot(t *testing.T) {
	q := newFakeQueue(t, true, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			<-r.Context().Done()
			return
		}
		w.Write([]byte("ok"))
	})
	a, url := startActivator(t, Options{})
	a.SetEndpoints(rev, 1, []string{q.addr()})
	eventually(t, "the replica to be ready", readyIs(t, a, 1))

	ctx, cancel := context.WithCancel(context.Background())
	blocked := sendAsync(ctx, newClient(t), url+"/block", rev)
	eventually(t, "the request to reach the replica", func() bool { return q.inflight.Load() == 1 })
	cancel()
	receive(t, blocked, "the canceled request")
	eventually(t, "the slot to be released", inflightIs(t, a, 0))

	res := send(context.Background(), newClient(t), http.MethodGet, url, rev, "")
	if res.status != http.StatusOK || res.body != "ok" {
		t.Fatalf("next request: %v, want 200 ok", res)
	}
}

// containerConcurrency 1 with two replicas: two requests in flight, one
// on each, the rest waiting; no replica ever has two.
func TestContainerConcurrencyOneNeverDoublesUp(t *testing.T) {
	release := make(chan struct{})
	app := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	q1, q2 := newFakeQueue(t, true, app), newFakeQueue(t, true, app)
	a, url := startActivator(t, Options{})
	a.SetEndpoints(rev, 1, []string{q1.addr(), q2.addr()})
	eventually(t, "both replicas ready", readyIs(t, a, 2))

	c := newClient(t)
	var results []<-chan response
	for range 6 {
		results = append(results, sendAsync(context.Background(), c, url, rev))
	}
	eventually(t, "one request on each replica and four waiting", func() bool {
		w, f, _ := counts(t, a, rev)
		return w == 4 && f == 2 && q1.inflight.Load() == 1 && q2.inflight.Load() == 1
	})
	close(release)
	for i, ch := range results {
		if res := receive(t, ch, "a response"); res.status != http.StatusOK {
			t.Fatalf("request %d: %v", i, res)
		}
	}
	for i, q := range []*fakeQueue{q1, q2} {
		if m := q.maxInflight.Load(); m != 1 {
			t.Errorf("replica %d had %d requests at once, want 1", i+1, m)
		}
	}
	if n := q1.requests.Load() + q2.requests.Load(); n != 6 {
		t.Errorf("replicas got %d requests, want 6", n)
	}
}

// Sequential requests: first-available packs the first replica when
// containerConcurrency is 3 or less; round-robin alternates otherwise.
func TestBalancing(t *testing.T) {
	for _, tc := range []struct {
		cc     int64
		q1, q2 int32
	}{
		{cc: 1, q1: 4, q2: 0},
		{cc: 3, q1: 4, q2: 0},
		{cc: 4, q1: 2, q2: 2},
		{cc: 0, q1: 2, q2: 2},
	} {
		t.Run(fmt.Sprintf("cc=%d", tc.cc), func(t *testing.T) {
			q1, q2 := newFakeQueue(t, true, reply("1")), newFakeQueue(t, true, reply("2"))
			a, url := startActivator(t, Options{})
			// One at a time, so the ready order is q1, q2.
			a.SetEndpoints(rev, tc.cc, []string{q1.addr()})
			eventually(t, "q1 ready", readyIs(t, a, 1))
			a.SetEndpoints(rev, tc.cc, []string{q1.addr(), q2.addr()})
			eventually(t, "q2 ready", readyIs(t, a, 2))
			c := newClient(t)
			for range 4 {
				if res := send(context.Background(), c, http.MethodGet, url, rev, ""); res.status != http.StatusOK {
					t.Fatal(res)
				}
			}
			if g1, g2 := q1.requests.Load(), q2.requests.Load(); g1 != tc.q1 || g2 != tc.q2 {
				t.Fatalf("replicas got %d and %d requests, want %d and %d", g1, g2, tc.q1, tc.q2)
			}
		})
	}
}

// A replica that leaves the endpoints takes no more traffic; requests
// wait for the next one.
func TestVanishedEndpointTakesNoTraffic(t *testing.T) {
	q1, q2 := newFakeQueue(t, true, reply("1")), newFakeQueue(t, true, reply("2"))
	a, url := startActivator(t, Options{})
	a.SetEndpoints(rev, 0, []string{q1.addr()})
	eventually(t, "q1 ready", readyIs(t, a, 1))
	a.SetEndpoints(rev, 0, nil)
	if _, _, ready := counts(t, a, rev); ready != 0 {
		t.Fatalf("ready = %d after the endpoint vanished, want 0", ready)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pending := sendAsync(ctx, newClient(t), url, rev)
	eventually(t, "the request to wait", waitingIs(t, a, 1))
	a.SetEndpoints(rev, 0, []string{q2.addr()})
	if res := receive(t, pending, "the response"); res.status != http.StatusOK || res.body != "2" {
		t.Fatalf("got %v, want 200 from the new replica", res)
	}
	if n := q1.requests.Load(); n != 0 {
		t.Errorf("vanished replica got %d requests", n)
	}
}

// Forgetting a Revision fails its waiting requests at once.
func TestForgetFailsWaiters(t *testing.T) {
	a, url := startActivator(t, Options{})
	a.SetEndpoints(rev, 0, nil)
	pending := sendAsync(context.Background(), newClient(t), url, rev)
	eventually(t, "the request to wait", waitingIs(t, a, 1))
	a.Forget(rev)
	res := receive(t, pending, "the response")
	if want := "activator: revision default/hello was deleted\n"; res.status != http.StatusServiceUnavailable || res.body != want {
		t.Fatalf("got %v, want 503 %q", res, want)
	}
	if a.get(rev) != nil {
		t.Fatal("the revision is still known")
	}
}

// Two activators over three replicas with containerConcurrency 1: the
// first sends only to replicas 0 and 2 of the sorted list, the second
// only to replica 1, so each admits its share, two and one, and the rest
// wait; no replica ever has two requests, though both activators take
// traffic at once.
func TestActivatorsTakeTheirShare(t *testing.T) {
	release := make(chan struct{})
	app := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	qs := []*fakeQueue{newFakeQueue(t, true, app), newFakeQueue(t, true, app), newFakeQueue(t, true, app)}
	slices.SortFunc(qs, func(p, q *fakeQueue) int { return strings.Compare(p.addr(), q.addr()) })
	var addrs []string
	for _, q := range qs {
		addrs = append(addrs, q.addr())
	}
	selves := []string{"10.0.0.1", "10.0.0.2"}
	var as []*Activator
	var urls []string
	for _, self := range selves {
		a, url := startActivator(t, Options{Self: self})
		a.setPeers(peersOf(selves, self)) // as the peers reconciler does
		a.SetEndpoints(rev, 1, addrs)
		eventually(t, "the replicas ready", readyIs(t, a, 3))
		as, urls = append(as, a), append(urls, url)
	}

	c := newClient(t)
	var results []<-chan response
	for _, url := range urls {
		for range 3 {
			results = append(results, sendAsync(context.Background(), c, url, rev))
		}
	}
	for i, share := range []int{2, 1} {
		eventually(t, "every request in flight or waiting", func() bool {
			w, f, _ := counts(t, as[i], rev)
			return w+f == 3
		})
		if w, f, _ := counts(t, as[i], rev); f != share {
			t.Errorf("activator %d: %d in flight, %d waiting; want %d in flight", i, f, w, share)
		}
	}
	eventually(t, "one request on each replica", func() bool {
		return qs[0].inflight.Load() == 1 && qs[1].inflight.Load() == 1 && qs[2].inflight.Load() == 1
	})

	close(release)
	for i, ch := range results {
		if res := receive(t, ch, "a response"); res.status != http.StatusOK {
			t.Fatalf("request %d: %v", i, res)
		}
	}
	for i, q := range qs {
		if m := q.maxInflight.Load(); m != 1 {
			t.Errorf("replica %d had %d requests at once, want 1", i, m)
		}
	}
	if n0, n1, n2 := qs[0].requests.Load(), qs[1].requests.Load(), qs[2].requests.Load(); n0+n2 != 3 || n1 != 3 {
		t.Errorf("replicas got %d, %d and %d requests; want the first activator's 3 on replicas 0 and 2, the second's 3 on 1", n0, n1, n2)
	}
}

// A replica the slices list as not ready yet takes its first request as
// soon as its queue-proxy answers the activator's probe, without waiting
// for its readiness to reach the slices.
func TestNotReadyEndpointServesOnceItsProbePasses(t *testing.T) {
	q := newFakeQueue(t, false, reply("early"))
	a, url := startActivator(t, Options{})
	cfg := revisionConfig{wait: time.Minute}
	a.update(rev, cfg, endpointSet{notReady: []string{q.addr()}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pending := sendAsync(ctx, newClient(t), url, rev)
	eventually(t, "the request to wait", waitingIs(t, a, 1))
	eventually(t, "probes of the unready replica", func() bool { return q.probes.Load() >= 2 })
	q.ready.Store(true)
	if res := receive(t, pending, "the response"); res.status != http.StatusOK || res.body != "early" {
		t.Fatalf("got %v, want 200 from the replica its probe found ready", res)
	}
}

// A replica whose readiness the slices withdraw stops taking requests
// until the activator's probe finds it ready again.
func TestWithdrawnReadinessTakesNoTraffic(t *testing.T) {
	q := newFakeQueue(t, true, reply("back"))
	a, url := startActivator(t, Options{})
	cfg := revisionConfig{wait: time.Minute}
	a.update(rev, cfg, endpointSet{ready: []string{q.addr()}})
	eventually(t, "the replica ready", readyIs(t, a, 1))
	q.ready.Store(false)
	a.update(rev, cfg, endpointSet{notReady: []string{q.addr()}})
	if _, _, ready := counts(t, a, rev); ready != 0 {
		t.Fatalf("ready = %d after the slices withdrew readiness, want 0", ready)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pending := sendAsync(ctx, newClient(t), url, rev)
	eventually(t, "the request to wait", waitingIs(t, a, 1))
	if n := q.requests.Load(); n != 0 {
		t.Fatalf("the unready replica got %d requests", n)
	}
	q.ready.Store(true)
	if res := receive(t, pending, "the response"); res.status != http.StatusOK || res.body != "back" {
		t.Fatalf("got %v, want 200 once its probe passed again", res)
	}
}
