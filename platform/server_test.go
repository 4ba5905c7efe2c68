package platform

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/knitops/knit/internal/poll"
)

// TestServerDrains: after the stop signal a server keeps answering while
// it reports not ready, lets a request in flight finish, and only then
// stops accepting.
func TestServerDrains(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, _ *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "slow")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	srv, err := Listen("test", "127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	srv.QuietPeriod = 5 * time.Second // the window this test works in, not a bound on anything
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()

	get := func(path string) (string, error) {
		resp, err := http.Get(srv.URL() + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if body, err := get("/"); err != nil || body != "ok" {
		t.Fatalf("before stop: %q %v", body, err)
	}
	if err := srv.ReadyCheck(nil); err != nil {
		t.Fatalf("ready before stop: %v", err)
	}
	slow := make(chan string, 1)
	go func() { b, _ := get("/slow"); slow <- b }()
	<-entered

	stop()
	poll.Until(t, "not ready once draining", 10*time.Millisecond, 5*time.Second, func(context.Context) (bool, string) {
		err := srv.ReadyCheck(nil)
		return err != nil, "still ready"
	})
	if body, err := get("/"); err != nil || body != "ok" {
		t.Errorf("during the quiet period: %q %v, want still served", body, err)
	}
	close(release)
	if b := <-slow; b != "slow" {
		t.Errorf("request in flight across the stop: %q, want its answer", b)
	}
	if err := <-done; err != nil {
		t.Errorf("Start after drain: %v", err)
	}
	if _, err := get("/"); err == nil {
		t.Error("still accepting after the drain")
	}
}
