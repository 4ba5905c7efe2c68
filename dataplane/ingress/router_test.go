package ingress

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// app is a loopback server answering with its name and the revision
// headers the router added.
func app(t *testing.T, name string) (port int32) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s/%s %s", name, r.Header.Get(NamespaceHeader), r.Header.Get(RevisionHeader), r.Host)
		if f := r.Header.Get("Forwarded"); f != "" {
			fmt.Fprintf(w, " %s", f)
		}
	}))
	t.Cleanup(srv.Close)
	return int32(srv.Listener.Addr().(*net.TCPAddr).Port)
}

func closedPort(t *testing.T) int32 {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := int32(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	return port
}

func serve(t *testing.T, r *Router, host string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "http://"+host+"/", nil)
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	body, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(body)
}

func TestRouterProxiesByHost(t *testing.T) {
	r := NewRouter()
	r.Update(Options{}.Build(
		[]servingv1.Route{route("hello", nil, "http://hello.default.localhost", servingv1.TrafficTarget{RevisionName: "hello-1", Percent: ptr.To[int64](100)})},
		[]discoveryv1.EndpointSlice{slice("hello-1", app(t, "one"), true, "127.0.0.1")},
	))
	code, body := serve(t, r, "hello.default.localhost:8080")
	if want := `one default/hello-1 hello.default.localhost:8080 for=192.0.2.1;host="hello.default.localhost:8080";proto=http`; code != 200 || body != want {
		t.Errorf("routed request = %d %q, want the app's answer with revision headers, the original Host and Forwarded %q", code, body, want)
	}
	code, body = serve(t, r, "nope.default.localhost")
	if code != http.StatusNotFound || !strings.Contains(body, `no route for host "nope.default.localhost"`) {
		t.Errorf("unknown host = %d %q, want 404 naming the host", code, body)
	}
}

// A refused connection (an endpoint that just went away) is retried on
// the next endpoint; the client never sees it.
func TestRouterRetriesRefusedConnections(t *testing.T) {
	r := NewRouter()
	dead, live := closedPort(t), app(t, "live")
	r.Update(Options{}.Build(
		[]servingv1.Route{route("hello", nil, "http://hello.default.localhost", servingv1.TrafficTarget{RevisionName: "hello-1", Percent: ptr.To[int64](100)})},
		[]discoveryv1.EndpointSlice{slice("hello-1", dead, true, "127.0.0.1"), func() discoveryv1.EndpointSlice {
			s := slice("hello-1", live, true, "127.0.0.1")
			s.Name = "second"
			return s
		}()},
	))
	for i := 0; i < 10; i++ {
		if code, body := serve(t, r, "hello.default.localhost"); code != 200 || !strings.HasPrefix(body, "live") {
			t.Fatalf("request %d = %d %q, want the live endpoint after a retry", i, code, body)
		}
	}
}

// A request that reached the app and failed there is not retried.
func TestRouterDoesNotRetryRequestsThatReachedTheApp(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		panic(http.ErrAbortHandler) // the app drops the connection mid-request
	}))
	defer srv.Close()
	r := NewRouter()
	r.Update(Options{}.Build(
		[]servingv1.Route{route("hello", nil, "http://hello.default.localhost", servingv1.TrafficTarget{RevisionName: "hello-1", Percent: ptr.To[int64](100)})},
		[]discoveryv1.EndpointSlice{slice("hello-1", int32(srv.Listener.Addr().(*net.TCPAddr).Port), true, "127.0.0.1")},
	))
	if code, _ := serve(t, r, "hello.default.localhost"); code != http.StatusBadGateway {
		t.Errorf("status = %d, want 502", code)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("app called %d times, want exactly 1", n)
	}
}

// A client speaking h2c (gRPC, say) reaches the app as HTTP/2: the
// router mirrors the inbound protocol to the revision.
func TestRouterPassesH2C(t *testing.T) {
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "app saw %s", r.Proto)
	}))
	backend.Config.Protocols = new(http.Protocols)
	backend.Config.Protocols.SetHTTP1(true)
	backend.Config.Protocols.SetUnencryptedHTTP2(true)
	backend.Start()
	t.Cleanup(backend.Close)
	port := int32(backend.Listener.Addr().(*net.TCPAddr).Port)

	r := NewRouter()
	r.Update(Options{}.Build(
		[]servingv1.Route{route("grpc", nil, "http://grpc.default.localhost", servingv1.TrafficTarget{RevisionName: "grpc-1", Percent: ptr.To[int64](100)})},
		[]discoveryv1.EndpointSlice{slice("grpc-1", port, true, "127.0.0.1")},
	))
	front := httptest.NewUnstartedServer(r)
	front.Config.Protocols = new(http.Protocols)
	front.Config.Protocols.SetHTTP1(true)
	front.Config.Protocols.SetUnencryptedHTTP2(true)
	front.Start()
	t.Cleanup(front.Close)

	for _, tc := range []struct {
		name string
		h2c  bool
		want string
	}{{"h2c", true, "app saw HTTP/2.0"}, {"http/1.1", false, "app saw HTTP/1.1"}} {
		tr := &http.Transport{}
		if tc.h2c {
			tr.Protocols = new(http.Protocols)
			tr.Protocols.SetUnencryptedHTTP2(true)
		}
		req, _ := http.NewRequest(http.MethodGet, front.URL, nil)
		req.Host = "grpc.default.localhost"
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, body, tc.want)
		}
		tr.CloseIdleConnections()
	}
}

// A table rebuilt for another reason (an endpoint added) keeps the split's
// place in its cycle: any 100 consecutive requests still split exactly.
func TestRouterKeepsSplitExactAcrossUpdates(t *testing.T) {
	a, b := app(t, "a"), app(t, "b")
	routes := []servingv1.Route{route("hello", nil, "http://hello.default.localhost",
		servingv1.TrafficTarget{RevisionName: "hello-1", Percent: ptr.To[int64](50)},
		servingv1.TrafficTarget{RevisionName: "hello-2", Percent: ptr.To[int64](50)})}
	r := NewRouter()
	r.Update(Options{}.Build(routes, []discoveryv1.EndpointSlice{slice("hello-1", a, true, "127.0.0.1"), slice("hello-2", b, true, "127.0.0.1")}))
	seen := map[string]int{}
	for i := range 100 {
		if i == 37 { // mid-cycle: a second replica of hello-2 appears
			r.Update(Options{}.Build(routes, []discoveryv1.EndpointSlice{
				slice("hello-1", a, true, "127.0.0.1"), slice("hello-2", b, true, "127.0.0.1"), slice("hello-2", app(t, "b"), true, "127.0.0.1"),
			}))
		}
		_, body := serve(t, r, "hello.default.localhost")
		seen[strings.Fields(body)[0]]++
	}
	if seen["a"] != 50 || seen["b"] != 50 {
		t.Errorf("100 requests across a table update split %v, want exactly 50/50", seen)
	}
}

// A router that has not read its routes yet holds a request instead of
// answering 404 for a host it does not know yet, and answers it from the
// first table; a client that gives up first gets a 503, never a 404.
func TestRouterHoldsRequestsUntilItsFirstTable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := NewRouter()
		code := make(chan int, 1)
		go func() {
			c, _ := serve(t, r, "nope.default.localhost")
			code <- c
		}()
		synctest.Wait()
		select {
		case c := <-code:
			t.Fatalf("answered %d before the router had a table", c)
		default:
		}
		r.Update(Options{}.Build(nil, nil))
		if c := <-code; c != http.StatusNotFound {
			t.Errorf("after the first table: %d, want 404 for an unknown host", c)
		}

		waiting := NewRouter()
		ctx, cancel := context.WithCancel(context.Background())
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, "http://hello.default.localhost/", nil)
		w := httptest.NewRecorder()
		done := make(chan struct{})
		go func() { waiting.ServeHTTP(w, req); close(done) }()
		synctest.Wait()
		cancel()
		<-done
		if w.Code != http.StatusServiceUnavailable {
			t.Errorf("client gone before the first table: %d, want 503", w.Code)
		}
	})
}
