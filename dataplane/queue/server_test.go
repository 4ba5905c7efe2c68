package queue

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// testQueue is a queue-proxy in front of an app, both on loopback.
type testQueue struct {
	*Server
	url    string // serving port
	cancel context.CancelFunc
	done   chan error
}

// startApp serves h on a loopback port with the given protocols (HTTP/1
// when none) and returns the port.
func startApp(t *testing.T, h http.Handler, h2cOnly bool) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	if h2cOnly {
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetUnencryptedHTTP2(true)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// startQueue runs a queue-proxy for the app on userPort until the test
// ends; mutate adjusts the config.
func startQueue(t *testing.T, userPort int, mutate func(*Config)) *testQueue {
	t.Helper()
	cfg, err := ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.ListenHost = "127.0.0.1"
	cfg.ServingPort, cfg.AdminPort, cfg.MetricsPort = 0, 0, 0
	cfg.UserPort = userPort
	cfg.DrainQuietPeriod = 0
	cfg.Revision, cfg.Pod = "hello-abc1234", "hello-abc1234-pod"
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	q := &testQueue{Server: s, url: "http://" + s.ServingAddr().String(), cancel: cancel, done: make(chan error, 1)}
	go func() { q.done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-q.done; err != nil {
			t.Errorf("Serve() = %v, want nil", err)
		}
	})
	return q
}

// waitFor polls cond until it holds or the test's deadline nears.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	if d, ok := t.Deadline(); ok && d.Before(deadline) {
		deadline = d.Add(-time.Second)
	}
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func get(t *testing.T, url string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

func TestServerProbesAndEndpoints(t *testing.T) {
	// An app that is not listening yet: probes fail.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	q := startQueue(t, port, nil)
	queueProbe := http.Header{probeHeader: {queueProbeValue}}

	if code, body := get(t, q.url, queueProbe); code != http.StatusServiceUnavailable {
		t.Errorf("probe before the app listens: %d %q, want 503", code, body)
	}
	if code, _ := get(t, "http://"+q.AdminAddr().String()+HealthPath, nil); code != http.StatusServiceUnavailable {
		t.Errorf("%s before the app listens: %d, want 503", HealthPath, code)
	}

	ln, err = net.Listen("tcp", ln.Addr().String())
	if err != nil {
		t.Skipf("could not listen again on the app's port: %v", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })}
	go srv.Serve(ln)
	defer srv.Close()
	waitFor(t, "the queue to see the app ready", q.Ready)

	if code, body := get(t, q.url, queueProbe); code != http.StatusOK || body != "queue" {
		t.Errorf("probe once ready: %d %q, want 200 queue", code, body)
	}
	if code, body := get(t, "http://"+q.AdminAddr().String()+HealthPath, nil); code != http.StatusOK || body != "ok\n" {
		t.Errorf("%s once ready: %d %q, want 200 ok", HealthPath, code, body)
	}
	if code, body := get(t, q.url, nil); code != http.StatusOK || body != "hello" {
		t.Errorf("request: %d %q, want 200 hello", code, body)
	}

	code, body := get(t, "http://"+q.MetricsAddr().String()+MetricsPath, nil)
	for _, want := range []string{
		`knit_queue_requests_total{code_class="2xx",`,
		`knit_queue_request_duration_seconds_bucket{`,
		`knit_queue_user_container_ready{`,
		`revision_name="hello-abc1234"`,
		`go_goroutines`,
	} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("%s: %d, body lacks %q", MetricsPath, code, want)
		}
	}

	code, body = get(t, "http://"+q.MetricsAddr().String()+StatsPath, nil)
	var st Stat
	if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil {
		t.Fatalf("%s: %d %q (%v)", StatsPath, code, body, err)
	}
	// Probes are not requests: only the one that reached the app counts.
	if st.RequestCount != 1 || st.PodName != "hello-abc1234-pod" || st.WindowSeconds <= 0 {
		t.Errorf("stats = %+v, want 1 request from pod hello-abc1234-pod", st)
	}
}

func TestServerOverloaded(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 10)
	port := startApp(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		io.WriteString(w, "done")
	}), false)
	q := startQueue(t, port, func(c *Config) { c.ContainerConcurrency, c.QueueDepth = 1, 1 })

	var wg sync.WaitGroup
	results := make(chan string, 2)
	for range 2 {
		wg.Go(func() {
			code, body := get(t, q.url, nil)
			results <- http.StatusText(code) + " " + body
		})
	}
	<-arrived // one holds the slot
	waitFor(t, "a request to queue", func() bool { return q.breaker.Queued() == 1 })

	code, body := get(t, q.url, nil)
	want := "queue-proxy: overloaded: 1 requests in flight and 1 queued for containerConcurrency=1\n"
	if code != http.StatusServiceUnavailable || body != want {
		t.Errorf("third request: %d %q, want 503 %q", code, body, want)
	}
	close(release)
	wg.Wait()
	close(results)
	for r := range results {
		if r != "OK done" {
			t.Errorf("admitted request: %q, want OK done", r)
		}
	}
}

func TestServerTimeout(t *testing.T) {
	port := startApp(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers; the queue gives up
	}), false)
	q := startQueue(t, port, func(c *Config) { c.RevisionTimeout = 100 * time.Millisecond })
	code, body := get(t, q.url, nil)
	want := "queue-proxy: request timeout: the app did not finish answering within 100ms (timeoutSeconds)\n"
	if code != http.StatusGatewayTimeout || body != want {
		t.Errorf("got %d %q, want 504 %q", code, body, want)
	}
}

// Cancelling Serve's context drains: probes turn unready, the in-flight
// request completes, new connections are refused, Serve returns nil.
func TestServerDrain(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{})
	port := startApp(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(arrived)
			<-release
		}
		io.WriteString(w, "finished")
	}), false)

	cfg, _ := ConfigFromEnv(func(string) string { return "" })
	cfg.ListenHost = "127.0.0.1"
	cfg.ServingPort, cfg.AdminPort, cfg.MetricsPort, cfg.UserPort = 0, 0, 0, port
	cfg.DrainQuietPeriod = 0
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	url := "http://" + s.ServingAddr().String()
	waitFor(t, "the app to be ready", s.Ready)

	type result struct {
		code int
		body string
		err  error
	}
	inflight := make(chan result, 1)
	go func() {
		res, err := http.Get(url + "/slow")
		if err != nil {
			inflight <- result{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		inflight <- result{res.StatusCode, string(b), err}
	}()
	<-arrived

	cancel()
	waitFor(t, "new connections to be refused", func() bool {
		c, err := net.Dial("tcp", s.ServingAddr().String())
		if err == nil {
			c.Close()
			return false
		}
		return true
	})
	if code, body := get(t, "http://"+s.AdminAddr().String()+HealthPath, nil); code != http.StatusServiceUnavailable || body != "queue-proxy: shutting down\n" {
		t.Errorf("%s while draining: %d %q, want 503 shutting down", HealthPath, code, body)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v with a request in flight", err)
	default:
	}

	close(release)
	if r := <-inflight; r.err != nil || r.code != http.StatusOK || r.body != "finished" {
		t.Errorf("in-flight request: %d %q %v, want 200 finished", r.code, r.body, r.err)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve() = %v, want nil", err)
	}
}

func TestServerPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg, _ := ConfigFromEnv(func(string) string { return "" })
	cfg.ListenHost = "127.0.0.1"
	cfg.ServingPort, cfg.AdminPort, cfg.MetricsPort = ln.Addr().(*net.TCPAddr).Port, 0, 0
	_, err = NewServer(cfg)
	if err == nil || !strings.Contains(err.Error(), "serving port") {
		t.Errorf("NewServer on a busy port: %v, want a serving port error", err)
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Errorf("error %v does not wrap the listen error", err)
	}
}

// Knative's preStop hook on a queue-proxy that is not being stopped (the
// app alone restarts, after a failed liveness probe): /wait-for-drain
// answers, requests are still served, and the drain is cancelled so
// probes answer ready again. TestWaitForDrain covers the timing.
func TestServerWaitForDrain(t *testing.T) {
	port := startApp(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hi") }), false)
	q := startQueue(t, port, nil)
	waitFor(t, "the app to be ready", q.Ready)

	code, body := get(t, "http://"+q.AdminAddr().String()+DrainPath, nil)
	if code != http.StatusOK || !strings.HasPrefix(body, "drained: 0 requests in flight") && !strings.HasPrefix(body, "not drained") {
		t.Errorf("%s: %d %q, want 200", DrainPath, code, body)
	}
	if code, body := get(t, q.url, nil); code != http.StatusOK || body != "hi" {
		t.Errorf("request after %s: %d %q, want it still served", DrainPath, code, body)
	}
	waitFor(t, "probes to answer ready again", func() bool {
		code, _ := get(t, q.url, http.Header{probeHeader: {queueProbeValue}})
		return code == http.StatusOK
	})
}
