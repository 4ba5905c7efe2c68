package queue

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/websocket"
)

// HTTP/1.1 through the whole stack: a large request body streams to the
// app and back; the app sees the client's Host, forwarding headers and no
// routing headers; response headers and trailers come back.
func TestProxyHTTP1(t *testing.T) {
	type seen struct {
		Host, XFF, XFP, XFH, Revision, OriginalHost, Custom string
		Signature, Proto                                    string
	}
	var got seen
	port := startApp(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = seen{
			Host: r.Host, XFF: r.Header.Get("X-Forwarded-For"), XFP: r.Header.Get("X-Forwarded-Proto"),
			XFH: r.Header.Get("X-Forwarded-Host"), Revision: r.Header.Get("Knative-Serving-Revision"),
			OriginalHost: r.Header.Get(originalHostHeader), Custom: r.Header.Get("X-Custom"), Proto: r.Proto,
			Signature: r.Header.Get("Knit-Route-Signature"),
		}
		h := sha256.New()
		n, _ := io.Copy(h, r.Body)
		w.Header().Set("Trailer", "X-Body-Sha256")
		w.Header().Set("X-Body-Len", fmt.Sprint(n))
		w.WriteHeader(http.StatusCreated)
		io.Copy(w, bytes.NewReader(bytes.Repeat([]byte("z"), 1<<20)))
		w.Header().Set("X-Body-Sha256", fmt.Sprintf("%x", h.Sum(nil)))
	}), false)
	q := startQueue(t, port, func(c *Config) { c.ContainerConcurrency = 5 })

	body := bytes.Repeat([]byte("abcdefgh"), 300_000) // 2.4 MB
	req, _ := http.NewRequest(http.MethodPost, q.url+"/upload?x=1", bytes.NewReader(body))
	req.Host = "hello.default.example.com"
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	req.Header.Set("X-Forwarded-Proto", "https")
	req.Header.Set("X-Forwarded-Host", "hello.example.com")
	req.Header.Set("Knative-Serving-Revision", "hello-abc1234")
	req.Header.Set("Knit-Route-Signature", "v1.1.mac") // the ingress's, for the activator alone
	req.Header.Set("X-Custom", "kept")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	respBody, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}

	want := seen{
		Host: "hello.default.example.com", XFF: "203.0.113.9, 127.0.0.1", XFP: "https",
		XFH: "hello.example.com", Custom: "kept", Proto: "HTTP/1.1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("app saw (-want +got):\n%s", diff)
	}
	if res.StatusCode != http.StatusCreated || len(respBody) != 1<<20 || res.Header.Get("X-Body-Len") != fmt.Sprint(len(body)) {
		t.Errorf("response %d, %d bytes, X-Body-Len %s; want 201, %d bytes, %d", res.StatusCode, len(respBody), res.Header.Get("X-Body-Len"), 1<<20, len(body))
	}
	if want := fmt.Sprintf("%x", sha256.Sum256(body)); res.Trailer.Get("X-Body-Sha256") != want {
		t.Errorf("trailer X-Body-Sha256 = %q, want %q", res.Trailer.Get("X-Body-Sha256"), want)
	}

	// K-Original-Host replaces the Host the app sees.
	req, _ = http.NewRequest(http.MethodGet, q.url, nil)
	req.Header.Set(originalHostHeader, "original.example.com")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got.Host != "original.example.com" || got.OriginalHost != "" {
		t.Errorf("with %s: app saw Host %q and the header %q; want original.example.com and none", originalHostHeader, got.Host, got.OriginalHost)
	}
}

// h2cClient speaks HTTP/2 without TLS, as the activator does for gRPC.
func h2cClient() *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: tr}
}

func TestProxyH2C(t *testing.T) {
	proto := func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) }
	tests := []struct {
		name      string
		appH2C    bool
		protocol  Protocol
		clientH2C bool
		want      string
	}{
		{"h2c port: HTTP/1.1 in, h2c out", true, ProtocolH2C, false, "HTTP/2.0"},
		{"h2c port: h2c in, h2c out", true, ProtocolH2C, true, "HTTP/2.0"},
		{"auto: h2c in, h2c out", true, ProtocolAuto, true, "HTTP/2.0"},
		{"auto: HTTP/1.1 in, HTTP/1.1 out", false, ProtocolAuto, false, "HTTP/1.1"},
		{"http1 port: h2c in, HTTP/1.1 out", false, ProtocolHTTP1, true, "HTTP/1.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			port := startApp(t, http.HandlerFunc(proto), tt.appH2C)
			q := startQueue(t, port, func(c *Config) { c.UserProtocol = tt.protocol })
			client := http.DefaultClient
			if tt.clientH2C {
				client = h2cClient()
			}
			res, err := client.Get(q.url)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK || string(body) != tt.want {
				t.Errorf("app saw %d %q, want 200 %q", res.StatusCode, body, tt.want)
			}
			if tt.clientH2C && res.ProtoMajor != 2 {
				t.Errorf("client got %s from the queue, want HTTP/2", res.Proto)
			}
		})
	}
}

func TestProxyWebsocket(t *testing.T) {
	port := startApp(t, websocket.Handler(func(ws *websocket.Conn) { io.Copy(ws, ws) }), false)
	q := startQueue(t, port, func(c *Config) {
		c.ContainerConcurrency = 1
		// Limits far beyond the exchange below: they close a websocket
		// however busy (TestWebsocketTimeouts), not before.
		c.IdleTimeout = c.RevisionTimeout
	})
	ws, err := websocket.Dial(strings.Replace(q.url, "http", "ws", 1)+"/echo", "", "http://localhost/")
	if err != nil {
		t.Fatalf("dialing through the queue: %v", err)
	}
	defer ws.Close()
	for _, msg := range []string{"hello", "over", "the queue"} {
		if err := websocket.Message.Send(ws, msg); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := websocket.Message.Receive(ws, &got); err != nil {
			t.Fatal(err)
		}
		if got != msg {
			t.Errorf("echo = %q, want %q", got, msg)
		}
	}
	if n := q.tracker.Inflight(); n != 1 {
		t.Errorf("in flight during the websocket = %d, want 1", n)
	}
}

// A crashed app is a 502 naming the app's address and the error.
func TestProxyAppCrash(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	port := ln.Addr().(*net.TCPAddr).Port
	// The app accepts, reads a request and dies without answering. (The
	// queue's TCP readiness probes connect and send nothing.)
	go func() {
		defer ln.Close()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n, _ := c.Read(make([]byte, 4096))
			c.Close()
			if n > 0 {
				return
			}
		}
	}()
	q := startQueue(t, port, nil)

	code, body := get(t, q.url, nil)
	wantPrefix := "queue-proxy: error reaching the app on " + addr + ": "
	if code != http.StatusBadGateway || !strings.HasPrefix(body, wantPrefix) || !strings.Contains(body, "EOF") {
		t.Errorf("app died mid-request: %d %q, want 502 %q…EOF", code, body, wantPrefix)
	}

	waitFor(t, "the app's port to close", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	code, body = get(t, q.url, nil)
	if code != http.StatusBadGateway || !strings.HasPrefix(body, wantPrefix) || !strings.Contains(body, "connection refused") {
		t.Errorf("app gone: %d %q, want 502 %q…connection refused", code, body, wantPrefix)
	}
}
