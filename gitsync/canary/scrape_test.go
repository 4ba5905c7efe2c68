package canary

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// replica serves body as a queue-proxy's /metrics.
func replica(t *testing.T, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestScrape(t *testing.T) {
	body, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	a, b := replica(t, string(body)), replica(t, string(body))
	urls := []string{a.URL + "/metrics", b.URL + "/metrics"}
	got, err := Scrape(context.Background(), a.Client(), urls)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Sum(fixtureSnapshot(), fixtureSnapshot()), got); diff != "" {
		t.Errorf("Scrape (-want +got):\n%s", diff)
	}
	each, err := ScrapeReplicas(context.Background(), nil, urls)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Snapshot{urls[0]: fixtureSnapshot(), urls[1]: fixtureSnapshot()}
	if diff := cmp.Diff(want, each); diff != "" {
		t.Errorf("ScrapeReplicas (-want +got):\n%s", diff)
	}
}

func TestScrapeErrorsNameTheReplica(t *testing.T) {
	body, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	up := replica(t, string(body))
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL + "/metrics"
	down.Close()
	notQueue := replica(t, "# TYPE go_goroutines gauge\ngo_goroutines 3\n")

	tests := []struct {
		name string
		urls []string
		want []string // substrings of the error, each replica that failed
	}{
		{"one down", []string{up.URL + "/metrics", downURL}, []string{"scraping " + downURL + ": "}},
		{"wrong path", []string{up.URL + "/nope"}, []string{"scraping " + up.URL + "/nope: status 404 Not Found: 404 page not found"}},
		{"not a queue-proxy", []string{notQueue.URL + "/metrics"},
			[]string{"scraping " + notQueue.URL + "/metrics: no knit_queue_requests_total"}},
		{"every failure is named", []string{downURL, up.URL + "/metrics", notQueue.URL + "/metrics"},
			[]string{"scraping " + downURL + ": ", "scraping " + notQueue.URL + "/metrics: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Scrape(context.Background(), nil, tt.urls)
			if err == nil {
				t.Fatal("Scrape succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "scraping "+up.URL+"/metrics") {
				t.Errorf("error %q names the replica that answered", err)
			}
		})
	}
}

func TestScrapeHonoursContext(t *testing.T) {
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(hang)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Scrape(ctx, nil, []string{slow.URL + "/metrics"})
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("Scrape with a cancelled context = %v, want context canceled", err)
	}
}
