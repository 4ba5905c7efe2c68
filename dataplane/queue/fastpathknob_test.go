package queue

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// QUEUE_DISABLE_FAST_PATH is read as a boolean, off by default, and a
// malformed value is refused by name.
func TestConfigFromEnvDisableFastPath(t *testing.T) {
	tests := []struct {
		value   string
		want    bool
		wantErr bool
	}{
		{value: "", want: false},
		{value: "true", want: true},
		{value: "1", want: true},
		{value: "false", want: false},
		{value: "sometimes", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			cfg, err := ConfigFromEnv(func(name string) string {
				if name == "QUEUE_DISABLE_FAST_PATH" {
					return tt.value
				}
				return ""
			})
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "QUEUE_DISABLE_FAST_PATH") {
					t.Fatalf("ConfigFromEnv error = %v, want one naming QUEUE_DISABLE_FAST_PATH", err)
				}
				return
			}
			if err != nil || cfg.DisableFastPath != tt.want {
				t.Fatalf("ConfigFromEnv = DisableFastPath %t, %v; want %t", cfg.DisableFastPath, err, tt.want)
			}
		})
	}
}

// With the fast path off, a body-less GET (the fast path's request) is
// answered as before but through the ReverseProxy: the fast path's own
// connection pool to the app is never used. With it on, the same GET
// leaves its connection in that pool.
func TestDisableFastPathSendsGETThroughTheReverseProxy(t *testing.T) {
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hi") })
	for _, off := range []bool{false, true} {
		q := startQueue(t, startApp(t, app, false), func(c *Config) { c.DisableFastPath = off })
		waitFor(t, "the queue-proxy ready", q.Ready)
		res, err := http.Get(q.url + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || string(body) != "hi" {
			t.Fatalf("fast path off %t: GET = %d %q, want 200 \"hi\"", off, res.StatusCode, body)
		}
		pooled := q.transport.h1.Idle()
		if want := map[bool]int{false: 1, true: 0}[off]; pooled != want {
			t.Errorf("fast path off %t: %d connections in the fast path's pool after one GET, want %d", off, pooled, want)
		}
	}
}
