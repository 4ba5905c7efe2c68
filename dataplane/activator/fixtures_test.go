package activator

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// rev is the Revision most tests serve.
var rev = types.NamespacedName{Namespace: "default", Name: "hello"}

// waitLimit bounds every wait for something a test expects to happen; a
// test that hits it has failed, it is not a performance threshold.
const waitLimit = 10 * time.Second

// eventually polls cond until it holds, failing the test after waitLimit.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// receive waits for a value on ch, failing the test after waitLimit.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// fakeQueue is a queue-proxy on 127.0.0.1: it answers the activator's
// probe from ready, and passes every other request to app, recording
// what came in which order.
type fakeQueue struct {
	srv   *httptest.Server
	ready atomic.Bool
	app   http.HandlerFunc

	probes, requests      atomic.Int32
	inflight, maxInflight atomic.Int32

	mu     sync.Mutex
	events []string // "probe:ready", "probe:unready" or "request"
}

func newFakeQueue(t *testing.T, ready bool, app http.HandlerFunc) *fakeQueue {
	t.Helper()
	q := &fakeQueue{app: app}
	q.ready.Store(ready)
	q.srv = h2cServer(t, http.HandlerFunc(q.serve))
	return q
}

func (q *fakeQueue) addr() string { return q.srv.Listener.Addr().String() }

func (q *fakeQueue) record(e string) {
	q.mu.Lock()
	q.events = append(q.events, e)
	q.mu.Unlock()
}

func (q *fakeQueue) eventLog() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.events...)
}

func (q *fakeQueue) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(probeHeader) == probeValue || r.UserAgent() == probeUserAgent {
		q.probes.Add(1)
		if !q.ready.Load() {
			q.record("probe:unready")
			http.Error(w, "queue-proxy: user container not ready", http.StatusServiceUnavailable)
			return
		}
		q.record("probe:ready")
		io.WriteString(w, probeValue)
		return
	}
	q.record("request")
	q.requests.Add(1)
	n := q.inflight.Add(1)
	defer q.inflight.Add(-1)
	for {
		m := q.maxInflight.Load()
		if n <= m || q.maxInflight.CompareAndSwap(m, n) {
			break
		}
	}
	q.app(w, r)
}

// h2cServer starts a server on 127.0.0.1 speaking HTTP/1.1 and h2c.
func h2cServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// reply is an app answering its name.
func reply(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }
}

// fakeReporter records what the activator tells the autoscaler.
type fakeReporter struct {
	pokes chan types.NamespacedName
	loads chan loadReport
}

type loadReport struct {
	rev              types.NamespacedName
	concurrency, rps float64
}

func newFakeReporter() *fakeReporter {
	return &fakeReporter{pokes: make(chan types.NamespacedName, 100), loads: make(chan loadReport, 100)}
}

func (f *fakeReporter) Poke(rev types.NamespacedName) { f.pokes <- rev }

func (f *fakeReporter) ActivatorLoad(rev types.NamespacedName, concurrency, rps float64) {
	f.loads <- loadReport{rev, concurrency, rps}
}

// startActivator serves a new activator on 127.0.0.1 and runs its Start
// until the test ends.
func startActivator(t *testing.T, opts Options) (*Activator, string) {
	t.Helper()
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = a.Start(ctx) }()
	srv := h2cServer(t, a)
	t.Cleanup(func() { cancel(); <-done }) // runs before srv.Close
	return a, srv.URL
}

// newClient is an HTTP/1.1 client of its own, so tests share no pool.
func newClient(t *testing.T) *http.Client {
	tr := &http.Transport{Proxy: nil}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// response is what a request through the activator got.
type response struct {
	status int
	body   string
	err    error
}

func (r response) String() string {
	if r.err != nil {
		return r.err.Error()
	}
	return fmt.Sprintf("%d %q", r.status, r.body)
}

// send makes a request for key through the activator at url.
func send(ctx context.Context, c *http.Client, method, url string, key types.NamespacedName, body string) response {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return response{err: err}
	}
	if key.Name != "" {
		req.Header.Set(NamespaceHeader, key.Namespace)
		req.Header.Set(RevisionHeader, key.Name)
	}
	resp, err := c.Do(req)
	if err != nil {
		return response{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, body: string(b), err: err}
}

// sendAsync is send in a goroutine.
func sendAsync(ctx context.Context, c *http.Client, url string, key types.NamespacedName) <-chan response {
	ch := make(chan response, 1)
	go func() { ch <- send(ctx, c, http.MethodGet, url, key, "") }()
	return ch
}

// counts is what a Revision's throttler holds.
func counts(t *testing.T, a *Activator, key types.NamespacedName) (waiting, inflight, ready int) {
	t.Helper()
	r := a.get(key)
	if r == nil {
		t.Fatalf("activator does not know %s", key)
	}
	return r.thr.counts()
}

func waitingIs(t *testing.T, a *Activator, n int) func() bool {
	return func() bool { w, _, _ := counts(t, a, rev); return w == n }
}

func readyIs(t *testing.T, a *Activator, n int) func() bool {
	return func() bool { _, _, r := counts(t, a, rev); return r == n }
}

func inflightIs(t *testing.T, a *Activator, n int) func() bool {
	return func() bool { _, f, _ := counts(t, a, rev); return f == n }
}
