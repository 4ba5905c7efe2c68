package canary

import (
	"bufio"
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knitops/knit/dataplane/queue"
)

// fixture is one canary replica's /metrics as a queue-proxy serves it,
// knit_queue_* families only, written with chosen values in the exact shape
// TestFixtureHasTheQueueProxyShape checks against a live queue-proxy.
const fixture = "testdata/queue-proxy-metrics.txt"

// startQueueProxy runs a real queue-proxy (dataplane/queue) in front of an
// app answering 500 on /fail and 200 elsewhere, with the const labels the
// fixture carries, and returns its serving and metrics URLs.
func startQueueProxy(t *testing.T) (serving, metrics string) {
	t.Helper()
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(app.Close)
	cfg, err := queue.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.ListenHost = "127.0.0.1"
	cfg.ServingPort, cfg.AdminPort, cfg.MetricsPort = 0, 0, 0
	cfg.UserPort = app.Listener.Addr().(*net.TCPAddr).Port
	cfg.DrainQuietPeriod = 0
	cfg.Namespace, cfg.Configuration = "default", "hello-pr7"
	cfg.Revision, cfg.Pod = "hello-pr7-abc1234", "hello-pr7-abc1234-7d9f-x2k4q"
	s, err := queue.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("queue-proxy Serve: %v", err)
		}
	})
	return "http://" + s.ServingAddr().String(), "http://" + s.MetricsAddr().String() + queue.MetricsPath
}

// TestQueueProxyMetrics reads a live queue-proxy's whole /metrics (Go and
// process collectors included) after known traffic.
func TestQueueProxyMetrics(t *testing.T) {
	serving, metrics := startQueueProxy(t)
	for _, path := range []string{"/", "/a", "/fail", "/b", "/fail", "/c", "/d"} {
		resp, err := http.Get(serving + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	got, err := Scrape(context.Background(), nil, []string{metrics})
	if err != nil {
		t.Fatal(err)
	}
	if got.Requests != 7 || got.Errors5xx != 2 {
		t.Errorf("Requests, Errors5xx = %v, %v; want 7, 2", got.Requests, got.Errors5xx)
	}
	var bounds []float64
	for i, b := range got.Buckets {
		bounds = append(bounds, b.UpperBound)
		if i > 0 && b.Count < got.Buckets[i-1].Count {
			t.Errorf("bucket %v count %v below the previous one's %v", b.UpperBound, b.Count, got.Buckets[i-1].Count)
		}
	}
	wantBounds := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 600, math.Inf(1)}
	if diff := cmp.Diff(wantBounds, bounds); diff != "" {
		t.Errorf("bucket bounds (-want +got):\n%s", diff)
	}
	if n := len(got.Buckets); n > 0 && got.Buckets[n-1].Count != 7 {
		t.Errorf("+Inf bucket = %v, want 7", got.Buckets[n-1].Count)
	}
}

// TestFixtureHasTheQueueProxyShape keeps the hand-valued fixture faithful
// to the queue-proxy: the same families, help, types, labels, bucket
// bounds and order, line by line, values aside. When dataplane/queue's
// metrics change, this fails with the live shape to copy.
func TestFixtureHasTheQueueProxyShape(t *testing.T) {
	_, metrics := startQueueProxy(t)
	resp, err := http.Get(metrics)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	live := shape(t, resp.Body)
	f, err := os.Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if diff := cmp.Diff(live, shape(t, f)); diff != "" {
		t.Errorf("%s does not have the live queue-proxy's shape (-live +fixture):\n%s", fixture, diff)
	}
}

// shape is the knit_queue_* lines of a /metrics body with sample values
// replaced by V, one string for a line-by-line diff.
func shape(t *testing.T, r io.Reader) string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		name := line
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			if f := strings.Fields(rest); len(f) > 1 {
				name = f[1]
			}
		}
		if !strings.HasPrefix(name, "knit_queue_") {
			continue
		}
		if !strings.HasPrefix(line, "#") {
			i := strings.LastIndexByte(line, ' ')
			line = line[:i] + " V"
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}
