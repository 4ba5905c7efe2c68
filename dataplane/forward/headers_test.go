package forward

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// clientRequest is what a client on the Internet may send: forwarding
// headers of its own, knit's internal headers, underscore spellings.
func clientRequest() *http.Request {
	r := httptest.NewRequest(http.MethodGet, "http://hello.example.com/", nil)
	r.RemoteAddr = "203.0.113.9:5555"
	for k, v := range map[string]string{
		"X-Forwarded-For": "10.0.0.1", "X-Forwarded-Host": "admin.internal", "X-Forwarded-Proto": "https",
		"Forwarded": "for=10.0.0.1", "K-Original-Host": "admin.internal", "K-Kubelet-Probe": "1",
		"K-Network-Probe": "queue", "K-Proxy-Request": "activator", "Knative-Serving-Revision": "x",
		"Knative-Serving-Namespace": "y", "X_Forwarded_For": "10.0.0.2", "K_original_host": "z",
		"Transfer_Encoding": "chunked", "X_App": "kept", "X-App": "kept", "Knit-Route-Signature": "forged",
	} {
		r.Header[k] = []string{v}
	}
	return r
}

// The rules per hop: what leaves the edge (the ingress) and what leaves
// an inner hop (the activator, the queue-proxy's two paths) for a
// request as ReverseProxy's Rewrite mode hands it over (hop-by-hop and
// forwarding headers already gone from out).
func TestHopRules(t *testing.T) {
	edgeOut := http.Header{
		"X-Forwarded-For": {"203.0.113.9"}, "X-Forwarded-Host": {"hello.example.com"}, "X-Forwarded-Proto": {"http"},
		"Forwarded": {`for=203.0.113.9;host="hello.example.com";proto=http`}, "X_App": {"kept"}, "X-App": {"kept"},
	}
	for _, tt := range []struct {
		name string
		hop  func(out, in *http.Request)
		in   func() *http.Request
		want http.Header
	}{
		{"edge: internal headers, underscore spellings and the client's forwarding headers go", func(out, in *http.Request) { SetEdge(out, in) }, clientRequest, edgeOut},
		{"edge over TLS", func(out, in *http.Request) { SetEdge(out, in) }, func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, "https://h/", nil)
			r.RemoteAddr = "[2001:db8::1]:443"
			r.TLS = &tls.ConnectionState{}
			return r
		}, http.Header{"X-Forwarded-For": {"2001:db8::1"}, "X-Forwarded-Host": {"h"}, "X-Forwarded-Proto": {"https"},
			"Forwarded": {`for="[2001:db8::1]";host="h";proto=https`}}},
		{"inner: the edge's view passed on, the peer appended", func(out, in *http.Request) { SetInner(out.Header, in) }, func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, "http://h/", nil)
			r.RemoteAddr = "10.1.2.3:80"
			r.Header = edgeOut.Clone()
			return r
		}, http.Header{"X-Forwarded-For": {"203.0.113.9, 10.1.2.3"}, "X-Forwarded-Host": {"hello.example.com"}, "X-Forwarded-Proto": {"http"},
			"Forwarded": {`for=203.0.113.9;host="hello.example.com";proto=http`}, "X_App": {"kept"}, "X-App": {"kept"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in()
			out := in.Clone(in.Context())
			StripHopByHop(out.Header)
			for k := range out.Header {
				if IsForwarding(k) {
					delete(out.Header, k) // as Rewrite mode does
				}
			}
			tt.hop(out, in)
			if diff := cmp.Diff(tt.want, out.Header); diff != "" {
				t.Errorf("headers out (-want +got):\n%s", diff)
			}
		})
	}
}

// Chained as in a cluster — ingress, activator, queue-proxy, app — the
// app sees the client as the edge saw it and every hop in
// X-Forwarded-For, and none of what the client made up.
func TestHopRulesChained(t *testing.T) {
	seen := make(chan http.Header, 1)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen <- r.Header }))
	t.Cleanup(app.Close)
	next := app.URL
	for _, inner := range []bool{true, true, false} { // built from the app outwards
		u, _ := url.Parse(next)
		p := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			if inner {
				SetInner(pr.Out.Header, pr.In)
				pr.Out.Host = pr.In.Host
			} else {
				SetEdge(pr.Out, pr.In)
			}
		}}
		s := httptest.NewServer(p)
		t.Cleanup(s.Close)
		next = s.URL
	}
	req := clientRequest()
	req.RequestURI, req.RemoteAddr = "", ""
	req.URL, _ = url.Parse(next)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	got := <-seen
	want := http.Header{
		"X-Forwarded-For": {"127.0.0.1, 127.0.0.1, 127.0.0.1"}, "X-Forwarded-Host": {"hello.example.com"}, "X-Forwarded-Proto": {"http"},
		"Forwarded": {`for=127.0.0.1;host="hello.example.com";proto=http`}, "X_app": {"kept"}, "X-App": {"kept"}, // canonical on the wire: upper case only after a dash
		"User-Agent": {"Go-http-client/1.1"}, "Accept-Encoding": {"gzip"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the app saw (-want +got):\n%s", diff)
	}
}

// Only names that read as a governed header with '-' for '_' are dropped.
func TestStripInternalUnderscores(t *testing.T) {
	h := http.Header{"X_forwarded_host": {"a"}, "Content_Length": {"1"}, "X_Real_Ip": {"b"}, "My_Header": {"c"}, "K_network_probe": {"queue"}}
	StripInternal(h)
	if want := (http.Header{"X_Real_Ip": {"b"}, "My_Header": {"c"}}); !cmp.Equal(want, h) {
		t.Errorf("StripInternal left %v, want %v", h, want)
	}
}
