package ingress

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// discard is a ResponseWriter that keeps nothing, so a benchmark counts
// the router's allocations and not a recorder's.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// benchRoutes are a 50/50 split with a tagged target.
func benchRoutes() []servingv1.Route {
	return []servingv1.Route{route("hello", nil, "http://hello.default.localhost",
		servingv1.TrafficTarget{RevisionName: "hello-1", Percent: ptr.To[int64](50), Tag: "old", URL: "http://old-hello.default.localhost"},
		servingv1.TrafficTarget{RevisionName: "hello-2", Percent: ptr.To[int64](50)})}
}

// benchOptions are the Options each benchmark runs under.
var benchOptions = []struct {
	name string
	opts Options
}{{"tag-header off", Options{}}, {"tag-header on", Options{TagHeaderRouting: true}}}

// BenchmarkRouterServeHTTP is one request through the router to a
// loopback app, by the split.
func BenchmarkRouterServeHTTP(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	port := int32(srv.Listener.Addr().(*net.TCPAddr).Port)
	for _, bo := range benchOptions {
		b.Run(bo.name, func(b *testing.B) {
			r := NewRouter()
			r.Update(bo.opts.Build(benchRoutes(),
				[]discoveryv1.EndpointSlice{slice("hello-1", port, true, "127.0.0.1"), slice("hello-2", port, true, "127.0.0.1")}))
			req := httptest.NewRequest(http.MethodGet, "http://hello.default.localhost/", nil)
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				r.ServeHTTP(w, req)
			}
		})
	}
}

// BenchmarkRoutePick is the routing decision alone: the request's entry
// and its next Revision, for a request naming a tag (which only routes
// with tag-header routing on).
func BenchmarkRoutePick(b *testing.B) {
	req := httptest.NewRequest(http.MethodGet, "http://hello.default.localhost:8080/", nil)
	req.Header.Set(TagHeader, "old")
	for _, bo := range benchOptions {
		b.Run(bo.name, func(b *testing.B) {
			tbl := bo.opts.Build(benchRoutes(), nil)
			b.ReportAllocs()
			for b.Loop() {
				tbl.route(req).pick()
			}
		})
	}
}

// BenchmarkRouterLoopback is requests through the router served by an
// http.Server, from 10 kept-alive client connections to a loopback app,
// with the fast path on and off: what a profile of the ingress process
// shows, less TLS.
func BenchmarkRouterLoopback(b *testing.B) {
	app := httptest.NewServer(queuebench.App())
	defer app.Close()
	port := int32(app.Listener.Addr().(*net.TCPAddr).Port)
	for _, off := range []bool{false, true} {
		b.Run(map[bool]string{false: "fast path", true: "fast path off"}[off], func(b *testing.B) {
			r := NewRouter()
			if off {
				r.DisableFastPath()
			}
			r.Update(Options{}.Build(benchRoutes(),
				[]discoveryv1.EndpointSlice{slice("hello-1", port, true, "127.0.0.1"), slice("hello-2", port, true, "127.0.0.1")}))
			front := httptest.NewServer(r)
			defer front.Close()
			defer closeIdle(r)
			req, err := queuebench.NewRequest(front.URL+"/", "hello.default.localhost", nil)
			if err != nil {
				b.Fatal(err)
			}
			const workers = 10
			conns := make([]*queuebench.Conn, workers)
			for i := range conns {
				conns[i] = queuebench.NewConn(req, time.Now().Add(time.Minute))
				defer conns[i].Close()
			}
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for i, c := range conns {
				n := b.N / workers
				if i < b.N%workers {
					n++
				}
				wg.Go(func() {
					for range n {
						if err := c.Do(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}
