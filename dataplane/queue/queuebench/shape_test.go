package queuebench

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench/bare"
)

// startH2CApp serves h on loopback over HTTP/1.1 and h2c, as the
// bench's app is served, counting the requests and their protocols.
func startH2CApp(t *testing.T, h http.Handler) (srv *httptest.Server, h2 *atomic.Int64) {
	t.Helper()
	h2 = new(atomic.Int64)
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			h2.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	srv.Config.Protocols = bare.Protocols()
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, h2
}

// Every shape runs its bounded count of requests against App with no
// error: the POST's 4 KiB arrive whole (App refuses less), the streamed
// answer is read to its last byte (the load generator refuses less), and
// h2c reaches the app as HTTP/2.
func TestRunShapes(t *testing.T) {
	srv, h2 := startH2CApp(t, App())
	for _, shape := range Shapes() {
		t.Run(string(shape), func(t *testing.T) {
			before := h2.Load()
			r, err := Run(context.Background(), LoadSpec{URL: srv.URL + "/", Shape: shape, Concurrency: 3, Duration: time.Minute, MaxRequests: 30})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Bounded || r.Requests != 30 || r.Errors != 0 {
				t.Fatalf("run = %+v (first error %v), want 30 requests, no errors, Bounded", r, r.FirstErr)
			}
			wantH2 := int64(0)
			if shape == ShapeH2C {
				wantH2 = 30
			}
			if got := h2.Load() - before; got != wantH2 {
				t.Errorf("the app saw %d HTTP/2 requests, want %d", got, wantH2)
			}
		})
	}
}

// App's streamed answer goes out chunked, StreamBytes long; its POST
// path refuses a body of the wrong size; its h2c path refuses HTTP/1.
func TestAppShapes(t *testing.T) {
	srv, _ := startH2CApp(t, App())
	res, err := http.Get(srv.URL + StreamPath)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if len(res.TransferEncoding) != 1 || res.TransferEncoding[0] != "chunked" || n != StreamBytes {
		t.Errorf("GET %s: Transfer-Encoding %v, %d bytes; want chunked, %d", StreamPath, res.TransferEncoding, n, StreamBytes)
	}
	for _, tt := range []struct {
		method, path string
		body         io.Reader
		want         int
	}{
		{http.MethodPost, PostPath, io.LimitReader(neverEnding{}, PostBodyBytes-1), http.StatusBadRequest},
		{http.MethodPost, PostPath, io.LimitReader(neverEnding{}, PostBodyBytes), http.StatusOK},
		{http.MethodGet, H2CPath, nil, http.StatusHTTPVersionNotSupported},
	} {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, tt.body)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tt.want {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, res.StatusCode, tt.want)
		}
	}
}

type neverEnding struct{}

func (neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// A path that cannot carry a shape shows up as errors, not as a fast
// cell: a proxy that cuts the streamed answer short, one that turns h2c
// into HTTP/1.1 on the way to the app, and a server without h2c.
func TestRunShapesCountBrokenPaths(t *testing.T) {
	app, _ := startH2CApp(t, App())
	appURL, _ := url.Parse(app.URL)

	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "short") // far short of StreamBytes
	}))
	defer cut.Close()
	downgrade := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(appURL)) // default transport: HTTP/1.1 out
	downgrade.Config.Protocols = bare.Protocols()
	downgrade.Start()
	defer downgrade.Close()
	h1Only := httptest.NewServer(App())
	defer h1Only.Close()

	for _, tt := range []struct {
		name  string
		url   string
		shape Shape
		want  any
	}{
		{"stream cut short", cut.URL, ShapeStream, new(*BodyError)},
		{"h2c downgraded", downgrade.URL, ShapeH2C, new(*StatusError)},
		{"no h2c", h1Only.URL, ShapeH2C, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Run(context.Background(), LoadSpec{URL: tt.url, Shape: tt.shape, Concurrency: 1, Duration: time.Minute, MaxRequests: 5})
			if err != nil {
				t.Fatal(err)
			}
			if r.Errors != 5 || r.Requests != 0 || r.FirstErr == nil {
				t.Fatalf("run = %+v, want 5 errors, no request counted", r)
			}
			if tt.want != nil && !errors.As(r.FirstErr, tt.want) {
				t.Errorf("first error %v (%T), want %T", r.FirstErr, r.FirstErr, tt.want)
			}
		})
	}
}

// The pooled bare proxy carries every shape, h2c included, end to end.
func TestBarePooledCarriesEveryShape(t *testing.T) {
	app, h2 := startH2CApp(t, App())
	appURL, _ := url.Parse(app.URL)
	proxy := httptest.NewUnstartedServer(bare.NewPooled(appURL))
	proxy.Config.Protocols = bare.Protocols()
	proxy.Start()
	defer proxy.Close()
	for _, shape := range Shapes() {
		r, err := Run(context.Background(), LoadSpec{URL: proxy.URL, Shape: shape, Concurrency: 2, Duration: time.Minute, MaxRequests: 10})
		if err != nil {
			t.Fatal(err)
		}
		if r.Requests != 10 || r.Errors != 0 {
			t.Errorf("%s through the pooled bare proxy = %+v (first error %v), want 10 requests, no errors", shape, r, r.FirstErr)
		}
	}
	if h2.Load() != 10 {
		t.Errorf("the app saw %d HTTP/2 requests, want the 10 h2c ones", h2.Load())
	}
}
