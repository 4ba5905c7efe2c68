package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The proxy serves on its Unix socket: an allowed host is relayed, any
// other refused with the cluster's setting named.
func TestServesTheAllowList(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "package") }))
	defer app.Close()
	host := strings.TrimPrefix(app.URL, "http://")
	socket := filepath.Join(t.TempDir(), "p.sock")
	done := make(chan error, 1)
	go func() { done <- run([]string{"--socket", socket, "--allow", host}) }()
	var conn net.Conn
	for i := 0; i < 200; i++ {
		var err error
		if conn, err = net.Dial("unix", socket); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if conn == nil {
		t.Fatal("the proxy never listened")
	}
	get := func(url string) (*http.Response, string) {
		c, err := net.Dial("unix", socket)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		h, _, _ := strings.Cut(strings.TrimPrefix(url, "http://"), "/")
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", url, h)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b := make([]byte, 4096)
		n, _ := resp.Body.Read(b)
		return resp, string(b[:n])
	}
	conn.Close()
	if resp, body := get(app.URL + "/pkg"); resp.StatusCode != 200 || body != "package" {
		t.Errorf("allowed host: %s %q", resp.Status, body)
	}
	if resp, _ := get("http://refused.invalid/pkg"); resp.StatusCode != 403 || !strings.Contains(resp.Status, "build.dockerfile.allowHosts") {
		t.Errorf("refused host: %s, want 403 naming the Helm value", resp.Status)
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the proxy did not stop on SIGTERM")
	}
}

func TestRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{}, {"--socket", "/tmp/x", "--allow", "*.org"}, {"--socket", "/tmp/x", "extra"}} {
		if err := run(args); err == nil {
			t.Errorf("run(%q) = nil, want an error", args)
		}
	}
}
