package queuecmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRunRejectsBadInput(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string
	}{
		{"stray argument", map[string]string{"USER_PORT": "8080"}, []string{"queue"}, `unexpected arguments ["queue"]`},
		{"no app port", map[string]string{"USER_PORT": "0"}, nil, "USER_PORT: 0 is not a port"},
		{"unknown flag", map[string]string{"USER_PORT": "8080"}, []string{"-nope"}, "flag provided but not defined: -nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var stderr bytes.Buffer
			err := Run(t.Context(), "knit-queue", tt.args, &stderr)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Run(%q) = %v, want an error containing %q", tt.args, err, tt.wantErr)
			}
		})
	}
}

// TestRunServesUntilCancelled: from Knative's environment and flags, Run
// proxies to the app, reports ready on the admin port and returns nil
// once its context ends (SIGTERM in the binaries).
func TestRunServesUntilCancelled(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "from the app") }))
	defer app.Close()
	_, userPort, _ := net.SplitHostPort(strings.TrimPrefix(app.URL, "http://"))
	serving, admin := freePort(t), freePort(t)
	t.Setenv("USER_PORT", userPort)
	t.Setenv("CONTAINER_CONCURRENCY", "0")

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, "knit-queue", []string{"-listen-host", "127.0.0.1", "-port", strconv.Itoa(serving),
			"-admin-port", strconv.Itoa(admin), "-metrics-port", "0", "-drain-quiet-period", "0s"}, io.Discard)
	}()

	waitOK(t, fmt.Sprintf("http://127.0.0.1:%d/healthz", admin))
	if body := get(t, fmt.Sprintf("http://127.0.0.1:%d/", serving)); body != "from the app" {
		t.Errorf("through the queue-proxy: %q, want the app's answer", body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after cancel = %v, want nil (a clean drain)", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func waitOK(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not 200 within 30s: %v", url, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
