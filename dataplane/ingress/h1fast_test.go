package ingress

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/dataplane/forward"
	"github.com/knitops/knit/internal/hopauth"
)

// appSaw is a request as the app parsed it.
type appSaw struct {
	Method, RequestURI, Proto, Host string
	Header                          http.Header
	ContentLength                   int64
	Body                            string
}

// clientGot is one answer as the client parsed it (Date dropped).
type clientGot struct {
	Status  int
	Header  http.Header
	Body    string
	Trailer http.Header
}

// rawApp answers each request with the raw bytes its path names in
// answers (the request's body read first) and reports what it parsed.
func rawApp(t *testing.T, answers map[string]string) (port int32, saw <-chan appSaw) {
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
			wg.Go(func() { answerRaw(c, answers, ch) })
		}
	})
	return int32(ln.Addr().(*net.TCPAddr).Port), ch
}

func answerRaw(c net.Conn, answers map[string]string, ch chan<- appSaw) {
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
		// After a close, an HTTP/1.0 answer or a 101 the connection is
		// no longer HTTP/1.1 (ReverseProxy never closes the answer of a
		// 101 it refuses, so the app hangs up).
		if _, err := io.WriteString(c, raw); err != nil || strings.Contains(raw, "Connection: close") ||
			strings.HasPrefix(raw, "HTTP/1.0") || strings.HasPrefix(raw, "HTTP/1.1 101") {
			return
		}
	}
}

// rawExchange sends raw on a new connection to addr and reads answers up
// to the final one.
func rawExchange(t *testing.T, addr, raw string) []clientGot {
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
	var out []clientGot
	for {
		res, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatalf("reading the answer: %v", err)
		}
		out = append(out, readGot(t, res))
		if res.StatusCode >= 200 || res.StatusCode == http.StatusSwitchingProtocols {
			return out
		}
	}
}

func readGot(t *testing.T, res *http.Response) clientGot {
	t.Helper()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	res.Header.Del("Date")
	return clientGot{res.StatusCode, res.Header, string(body), res.Trailer}
}

// fastAnswers are raw answers of every kind the relay treats apart.
var fastAnswers = map[string]string{
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
	"/switch":   "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
}

// diffRouters are two routers with one table, signing with one key, tag
// header routing on: one with the fast path, one without.
func diffRouters(t *testing.T, port int32) (fast, slow *Router, keys *hopauth.Keyring) {
	t.Helper()
	keys = hopauth.Generate()
	routes := []servingv1.Route{route("hello", nil, "http://hello.default.localhost",
		servingv1.TrafficTarget{RevisionName: "hello-1", Percent: ptr.To[int64](100), Tag: "old", URL: "http://old-hello.default.localhost"})}
	slices := []discoveryv1.EndpointSlice{slice("hello-1", port, true, "127.0.0.1")}
	fast, slow = NewRouter(), NewRouter()
	slow.DisableFastPath()
	for _, r := range []*Router{fast, slow} {
		r.SignRoutes(keys)
		r.Update(Options{TagHeaderRouting: true}.Build(routes, slices))
		t.Cleanup(func() { closeIdle(r) })
	}
	return fast, slow, keys
}

// closeIdle closes r's idle connections on both paths, so an app's
// connections end with the test.
func closeIdle(r *Router) {
	r.upstreams.closeIdle()
	r.proxy.Transport.(*retryTransport).next.(*forward.Transport).CloseIdleConnections()
}

// signed replaces a valid route signature in what the app saw by a mark:
// two routers sign alike only within one second.
func signed(t *testing.T, keys *hopauth.Keyring, s appSaw) appSaw {
	t.Helper()
	if v := s.Header[hopauth.RouteHeader]; len(v) == 1 {
		if err := keys.CheckRoute(v[0], "default", "hello-1", time.Now()); err != nil {
			t.Errorf("the route signature %q does not check: %v", v[0], err)
		}
		s.Header[hopauth.RouteHeader] = []string{"<valid>"}
	}
	return s
}

// The fast path sends the Revision what the ReverseProxy path sends it,
// and relays what that path relays, request by request: the same raw
// request goes through a router with the fast path and one without.
func TestFastPathMatchesReverseProxy(t *testing.T) {
	port, saw := rawApp(t, fastAnswers)
	fast, slow, keys := diffRouters(t, port)
	fastSrv, slowSrv := httptest.NewServer(fast), httptest.NewServer(slow)
	t.Cleanup(fastSrv.Close)
	t.Cleanup(slowSrv.Close)

	tests := []struct {
		name string
		raw  string
		fast bool // the fast path takes it
	}{
		{"headers: kept, dropped, hop-by-hop, forwarding, internal", "GET /plain?x=1&y=%41 HTTP/1.1\r\nHost: hello.default.localhost\r\nUser-Agent: curl/8\r\n" +
			"Accept: */*\r\nX-Multi: 1\r\nX-Multi: 2\r\nConnection: keep-alive, X-Hop\r\nX-Hop: gone\r\nKeep-Alive: 300\r\n" +
			"X-Forwarded-For: 203.0.113.9\r\nX-Forwarded-For: 198.51.100.1\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Host: evil.example.com\r\n" +
			"Forwarded: for=203.0.113.9\r\nKnative-Serving-Revision: other-1\r\nKnative-Serving-Namespace: kube-system\r\nK-Original-Host: admin\r\n" +
			"K-Proxy-Request: activator\r\nK-Network-Probe: queue\r\nKnit-Route-Signature: v1.1.forged\r\nX_Forwarded_For: 10.0.0.1\r\n" +
			"K_original_host: admin\r\nX_App: kept\r\nProxy-Authorization: Basic x\r\nTrailer: X-T\r\nUpgrade: h2c\r\nContent-Length: 0\r\n\r\n", true},
		{"no User-Agent", "GET /plain HTTP/1.1\r\nHost: hello.default.localhost\r\n\r\n", true},
		{"an empty User-Agent", "GET /plain HTTP/1.1\r\nHost: hello.default.localhost\r\nUser-Agent: \r\nUser-Agent: second\r\n\r\n", true},
		{"Connection names User-Agent", "GET /plain HTTP/1.1\r\nHost: hello.default.localhost\r\nUser-Agent: ua\r\nConnection: user-agent\r\n\r\n", true},
		{"Connection names edge headers", "GET /plain HTTP/1.1\r\nHost: hello.default.localhost\r\nConnection: X-Forwarded-Proto, knative-serving-revision, Knative-Serving-Tag\r\nKnative-Serving-Tag: nope\r\n\r\n", true},
		{"tag named by header", "GET /plain HTTP/1.1\r\nHost: hello.default.localhost\r\nKnative-Serving-Tag: old\r\n\r\n", true},
		{"tag named by host, a client's tag header replaced", "GET /plain HTTP/1.1\r\nHost: old-hello.default.localhost:8080\r\nKnative-Serving-Tag: other\r\nKnative-Serving-Default-Route: true\r\n\r\n", true},
		{"Te trailers", "GET /trailers HTTP/1.1\r\nHost: hello.default.localhost\r\nTe: trailers, deflate\r\n\r\n", true},
		{"HTTP/1.0 client", "GET /plain HTTP/1.0\r\nHost: hello.default.localhost\r\n\r\n", true},
		{"escaped path", "GET /a%20b//c/%2F?q HTTP/1.1\r\nHost: hello.default.localhost\r\n\r\n", true},
		{"empty query", "GET /plain? HTTP/1.1\r\nHost: hello.default.localhost\r\n\r\n", true},
		{"HEAD", "HEAD /head HTTP/1.1\r\nHost: hello.default.localhost\r\n\r\n", true},
		{"hop-by-hop answer headers", "GET /hop HTTP/1.1\r\nHost: hello.default.localhost\r\n\r\n", true},
		{"unannounced trailers", "GET /surprise HTTP/1.1\r\nHost: hello.default.localhost\r\n\r\n", true},
		{"103 Early Hints", "GET /hints HTTP/1.1\r\nHost: hello.default.localhost\r\n\r\n", true},
		{"server-sent events", "GET /events HTTP/1.1\r\nHost: hello.default.localhost\r\nAccept: text/event-stream\r\n\r\n", true},
		{"the app closes", "GET /close HTTP/1.1\r\nHost: hello.default.localhost\r\n\r\n", true},
		{"an HTTP/1.0 app", "GET /old HTTP/1.1\r\nHost: hello.default.localhost\r\n\r\n", true},
		{"204", "GET /empty HTTP/1.1\r\nHost: hello.default.localhost\r\n\r\n", true},
		{"304", "GET /notmod HTTP/1.1\r\nHost: hello.default.localhost\r\nIf-None-Match: \"x\"\r\n\r\n", true},
		{"500", "GET /error HTTP/1.1\r\nHost: hello.default.localhost\r\n\r\n", true},
		{"a 101 nobody asked for", "GET /switch HTTP/1.1\r\nHost: hello.default.localhost\r\n\r\n", true},
		{"a body: slow path", "POST /plain HTTP/1.1\r\nHost: hello.default.localhost\r\nContent-Length: 4\r\n\r\nbody", false},
		{"chunked body: slow path", "GET /plain HTTP/1.1\r\nHost: hello.default.localhost\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\n\r\n", false},
		{"DELETE: slow path", "DELETE /plain HTTP/1.1\r\nHost: hello.default.localhost\r\n\r\n", false},
		{"semicolon query: slow path", "GET /plain?a=1;b=2 HTTP/1.1\r\nHost: hello.default.localhost\r\n\r\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(tt.raw)))
			if err != nil {
				t.Fatal(err)
			}
			if got := fast.fastPathable(req); got != tt.fast {
				t.Fatalf("fastPathable = %t, want %t", got, tt.fast)
			}
			gotFast := rawExchange(t, fastSrv.Listener.Addr().String(), tt.raw)
			sawFast := signed(t, keys, <-saw)
			gotSlow := rawExchange(t, slowSrv.Listener.Addr().String(), tt.raw)
			sawSlow := signed(t, keys, <-saw)
			if diff := cmp.Diff(sawSlow, sawFast); diff != "" {
				t.Errorf("the app saw (-slow path +fast path):\n%s", diff)
			}
			if diff := cmp.Diff(gotSlow, gotFast); diff != "" {
				t.Errorf("the client got (-slow path +fast path):\n%s", diff)
			}
		})
	}
}

// Over TLS, an h2 request a browser sends (not gRPC) reaches the
// Revision as HTTP/1.1 on either path, with the same head, and its
// answer comes back the same.
func TestFastPathMatchesReverseProxyOverH2(t *testing.T) {
	port, saw := rawApp(t, fastAnswers)
	fast, slow, keys := diffRouters(t, port)
	start := func(r *Router) *http.Client {
		srv := httptest.NewUnstartedServer(r)
		srv.EnableHTTP2 = true
		srv.StartTLS()
		t.Cleanup(srv.Close)
		c := srv.Client()
		c.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
		}
		c.Transport.(*http.Transport).TLSClientConfig.InsecureSkipVerify = true // the test certificate names example.com
		return c
	}
	fastClient, slowClient := start(fast), start(slow)
	for _, tt := range []struct {
		name, method, path string
		header             http.Header
	}{
		{"GET with headers", http.MethodGet, "/plain?q=1", http.Header{"User-Agent": {"browser"}, "X-App": {"1", "2"}, "Cookie": {"a=1", "b=2"},
			"X-Forwarded-For": {"203.0.113.9"}, "Knative-Serving-Revision": {"other"}, "Knit-Route-Signature": {"forged"}}},
		{"HEAD", http.MethodHead, "/head", nil},
		{"trailers", http.MethodGet, "/trailers", http.Header{"Te": {"trailers"}}},
		{"103 hints then 200", http.MethodGet, "/hints", nil},
		{"204", http.MethodGet, "/empty", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			do := func(c *http.Client) (clientGot, appSaw) {
				req, err := http.NewRequest(tt.method, "https://hello.default.localhost"+tt.path, nil)
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range tt.header {
					req.Header[k] = v
				}
				res, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				if res.ProtoMajor != 2 {
					t.Fatalf("answered over %s, want HTTP/2", res.Proto)
				}
				got := readGot(t, res)
				return got, signed(t, keys, <-saw)
			}
			gotFast, sawFast := do(fastClient)
			gotSlow, sawSlow := do(slowClient)
			if diff := cmp.Diff(sawSlow, sawFast); diff != "" {
				t.Errorf("the app saw (-slow path +fast path):\n%s", diff)
			}
			if diff := cmp.Diff(gotSlow, gotFast); diff != "" {
				t.Errorf("the client got (-slow path +fast path):\n%s", diff)
			}
		})
	}
}
