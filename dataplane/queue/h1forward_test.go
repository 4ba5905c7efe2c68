package queue

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// appSaw is a request as the app parsed it.
type appSaw struct {
	Method, RequestURI, Proto, Host string
	Header                          http.Header
	ContentLength                   int64
	Body                            string
}

// answer is one response as the client parsed it (Date dropped).
type answer struct {
	Status  int
	Header  http.Header
	Body    string
	Trailer http.Header
}

// rawApp answers each request with the raw bytes its path names in
// answers (the request's body read first) and reports what it parsed. A
// connection is closed after an answer when the answer says so.
func rawApp(t *testing.T, answers map[string]string) (addr string, saw <-chan appSaw) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan appSaw, 16)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					body, _ := io.ReadAll(req.Body)
					ch <- appSaw{req.Method, req.RequestURI, req.Proto, req.Host, req.Header, req.ContentLength, string(body)}
					raw, ok := answers[req.URL.Path]
					if !ok {
						raw = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
					}
					if _, err := io.WriteString(c, raw); err != nil || strings.Contains(raw, "Connection: close") || strings.HasPrefix(raw, "HTTP/1.0") {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String(), ch
}

// exchange sends raw on a new connection to addr and reads answers up to
// the final one.
func exchange(t *testing.T, addr, raw string) []answer {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var out []answer
	for {
		res, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatalf("reading the answer: %v", err)
		}
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatalf("reading the body: %v", err)
		}
		res.Header.Del("Date")
		out = append(out, answer{res.StatusCode, res.Header, string(body), res.Trailer})
		if res.StatusCode >= 200 || res.StatusCode == http.StatusSwitchingProtocols {
			return out
		}
	}
}

// The fast path sends the app what ReverseProxy sends it, and relays
// what ReverseProxy relays, request by request: the same raw request
// goes through a queue forwarder with the fast path and one without.
// Streamed answers carry a Content-Type: for an untyped one, whether
// net/http sniffs one depends on ReverseProxy's head flush (a timer)
// racing its first body write.
func TestFastPathMatchesReverseProxy(t *testing.T) {
	answers := map[string]string{
		"/plain":    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nX-Multi: a\r\nX-Multi: b\r\n\r\nhello",
		"/hop":      "HTTP/1.1 200 OK\r\nConnection: X-Internal\r\nX-Internal: secret\r\nKeep-Alive: timeout=5\r\nProxy-Authenticate: Basic\r\nX-Kept: yes\r\nContent-Length: 2\r\n\r\nok",
		"/trailers": "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTrailer: X-Sum\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 42\r\n\r\n",
		"/surprise": "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Late: 1\r\n\r\n",
		"/hints":    "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"/events":   "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n7\r\ndata: 1\r\n7\r\ndata: 2\r\n0\r\n\r\n",
		"/close":    "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbye",
		"/old":      "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close",
		"/empty":    "HTTP/1.1 204 No Content\r\nX-Empty: 1\r\n\r\n",
		"/notmod":   "HTTP/1.1 304 Not Modified\r\nEtag: \"x\"\r\n\r\n",
		"/head":     "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n",
		"/error":    "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nboom",
	}
	appAddr, saw := rawApp(t, answers)
	log := slog.New(slog.DiscardHandler)
	transport := newAppTransport(appAddr, ProtocolAuto, 0)
	t.Cleanup(transport.close)
	fast := newAppForwarder(appAddr, transport, log)
	slow := &appForwarder{addr: appAddr, slow: newAppProxy(appAddr, transport, log), log: log}
	fastSrv, slowSrv := httptest.NewServer(fast), httptest.NewServer(slow)
	t.Cleanup(fastSrv.Close)
	t.Cleanup(slowSrv.Close)

	tests := []struct {
		name string
		raw  string
		fast bool // the fast path takes it
	}{
		{"headers: kept, dropped, hop-by-hop, forwarding", "GET /plain?x=1&y=%41 HTTP/1.1\r\nHost: hello.default.example.com\r\nUser-Agent: curl/8\r\n" +
			"Accept: */*\r\nX-Multi: 1\r\nX-Multi: 2\r\nConnection: keep-alive, X-Hop\r\nX-Hop: gone\r\nKeep-Alive: 300\r\n" +
			"X-Forwarded-For: 203.0.113.9\r\nX-Forwarded-For: 198.51.100.1, 192.0.2.7\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Host: hello.example.com\r\n" +
			"Forwarded: for=203.0.113.9\r\nKnative-Serving-Revision: hello-1\r\nKnative-Serving-Namespace: default\r\n" +
			"Knit-Route-Signature: v1.1.mac\r\nProxy-Authorization: Basic x\r\nTrailer: X-T\r\nUpgrade: h2c\r\nContent-Length: 0\r\n\r\n", true},
		{"no User-Agent", "GET /plain HTTP/1.1\r\nHost: a.example.com\r\n\r\n", true},
		{"an empty User-Agent", "GET /plain HTTP/1.1\r\nHost: a.example.com\r\nUser-Agent: \r\nUser-Agent: second\r\n\r\n", true},
		{"Connection names a forwarding header", "GET /plain HTTP/1.1\r\nHost: a\r\nConnection: X-Forwarded-Proto, x-forwarded-for\r\nX-Forwarded-Proto: https\r\nX-Forwarded-For: 192.0.2.1\r\n\r\n", true},
		{"HTTP/1.0 client", "GET /plain HTTP/1.0\r\nHost: a\r\n\r\n", true},
		{"escaped path", "GET /a%20b//c/%2F?q HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"empty query", "GET /plain? HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"HEAD", "HEAD /head HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"hop-by-hop answer headers", "GET /hop HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"announced trailers, client takes them", "GET /trailers HTTP/1.1\r\nHost: a\r\nTe: trailers, deflate\r\n\r\n", true},
		{"unannounced trailers", "GET /surprise HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"103 Early Hints", "GET /hints HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"server-sent events", "GET /events HTTP/1.1\r\nHost: a\r\nAccept: text/event-stream\r\n\r\n", true},
		{"the app closes", "GET /close HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"an HTTP/1.0 app", "GET /old HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"204", "GET /empty HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"304", "GET /notmod HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"x\"\r\n\r\n", true},
		{"500", "GET /error HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"a body: slow path", "POST /plain HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nbody", false},
		{"chunked body: slow path", "GET /plain HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\n\r\n", false},
		{"DELETE: slow path", "DELETE /plain HTTP/1.1\r\nHost: a\r\n\r\n", false},
		{"semicolon query: slow path", "GET /plain?a=1;b=2 HTTP/1.1\r\nHost: a\r\n\r\n", false},
		{"bad escape in query: slow path", "GET /plain?a=%zz HTTP/1.1\r\nHost: a\r\n\r\n", false},
		{"K-Original-Host: slow path", "GET /plain HTTP/1.1\r\nHost: a\r\nK-Original-Host: b.example.com\r\n\r\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(tt.raw)))
			if err != nil {
				t.Fatal(err)
			}
			if got := fastPathable(req); got != tt.fast {
				t.Fatalf("fastPathable = %t, want %t", got, tt.fast)
			}
			gotFast := exchange(t, fastSrv.Listener.Addr().String(), tt.raw)
			sawFast := <-saw
			gotSlow := exchange(t, slowSrv.Listener.Addr().String(), tt.raw)
			sawSlow := <-saw
			if diff := cmp.Diff(sawSlow, sawFast); diff != "" {
				t.Errorf("the app saw (-slow path +fast path):\n%s", diff)
			}
			if diff := cmp.Diff(gotSlow, gotFast); diff != "" {
				t.Errorf("the client got (-slow path +fast path):\n%s", diff)
			}
		})
	}
}

// A connection the app closed while idle fails the next request sent on
// it before any answer; the fast path sends it again on a new one, as
// http.Transport does, and the client never sees the race.
func TestFastPathRetriesAConnectionTheAppClosed(t *testing.T) {
	closed := make(chan struct{}, 1)
	var conns sync.WaitGroup
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close(); conns.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				// One answer per connection, then a close the proxy does
				// not hear about until it uses the connection again.
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				c.Close()
				closed <- struct{}{}
			})
		}
	}()
	transport := newAppTransport(ln.Addr().String(), ProtocolAuto, 0)
	t.Cleanup(transport.close)
	srv := httptest.NewServer(newAppForwarder(ln.Addr().String(), transport, slog.New(slog.DiscardHandler)))
	t.Cleanup(srv.Close)
	for i := range 3 {
		code, body := get(t, srv.URL, nil)
		if code != http.StatusOK || body != "ok" {
			t.Fatalf("request %d: %d %q, want 200 ok", i+1, code, body)
		}
		<-closed
	}
}

// When the client goes away, the app's request ends too: the fast path
// closes its connection to the app, as http.Transport cancels.
func TestFastPathClientGone(t *testing.T) {
	appDone := make(chan struct{})
	arrived := make(chan struct{})
	port := startApp(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
		close(appDone)
	}), false)
	q := startQueue(t, port, nil)
	c, err := net.Dial("tcp", strings.TrimPrefix(q.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	<-arrived
	c.Close()
	select {
	case <-appDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the app's request still runs after the client left")
	}
}

// Answers the fast path refuses are the slow path's errors: a 101 nobody
// asked for, endless informational answers, an oversized head.
func TestFastPathBadAnswers(t *testing.T) {
	answers := map[string]string{
		"/switch": "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
		"/hints":  strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", 6) + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
	}
	appAddr, _ := rawApp(t, answers)
	transport := newAppTransport(appAddr, ProtocolAuto, 0)
	t.Cleanup(transport.close)
	srv := httptest.NewServer(newAppForwarder(appAddr, transport, slog.New(slog.DiscardHandler)))
	t.Cleanup(srv.Close)
	for path, want := range map[string]string{
		"/switch": `backend tried to switch protocol "websocket" when "" was requested`,
		"/hints":  "too many 1xx informational responses",
	} {
		got := exchange(t, srv.Listener.Addr().String(), "GET "+path+" HTTP/1.1\r\nHost: a\r\n\r\n")
		last := got[len(got)-1]
		if last.Status != http.StatusBadGateway || !strings.Contains(last.Body, want) {
			t.Errorf("%s: %d %q, want 502 …%s", path, last.Status, last.Body, want)
		}
	}
}

// The bytes the fast path writes parse back as the request it read.
func TestWriteRequestHead(t *testing.T) {
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET /p?q=1 HTTP/1.1\r\nHost: h\r\nUser-Agent: ua\r\nX-A: 1\r\n\r\n")))
	if err != nil {
		t.Fatal(err)
	}
	req.RemoteAddr = "192.0.2.1:5555"
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	writeRequestHead(bw, req)
	bw.Flush()
	out, err := http.ReadRequest(bufio.NewReader(&buf))
	if err != nil {
		t.Fatalf("parsing %q: %v", buf.String(), err)
	}
	want := http.Header{"User-Agent": {"ua"}, "X-A": {"1"}, "X-Forwarded-For": {"192.0.2.1"}}
	if out.Method != "GET" || out.RequestURI != "/p?q=1" || out.Host != "h" || !cmp.Equal(out.Header, want) {
		t.Errorf("wrote %q", buf.String())
	}
}
