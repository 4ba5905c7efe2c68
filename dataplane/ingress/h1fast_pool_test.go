package ingress

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// helloRoute is all of hello.default.localhost to hello-1.
func helloRoute() []servingv1.Route {
	return []servingv1.Route{route("hello", nil, "http://hello.default.localhost", servingv1.TrafficTarget{RevisionName: "hello-1", Percent: ptr.To[int64](100)})}
}

// An endpoint that closed an idle connection fails the next request sent
// on it before any answer; the fast path sends it again on a new one, as
// http.Transport does, and the client never sees the race.
func TestFastPathRetriesAConnectionTheEndpointClosed(t *testing.T) {
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
				// One answer per connection, then a close the router does
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
	r := NewRouter()
	r.Update(Options{}.Build(helloRoute(), []discoveryv1.EndpointSlice{slice("hello-1", int32(ln.Addr().(*net.TCPAddr).Port), true, "127.0.0.1")}))
	t.Cleanup(func() { closeIdle(r) })
	for i := range 3 {
		if code, body := serve(t, r, "hello.default.localhost"); code != http.StatusOK || body != "ok" {
			t.Fatalf("request %d: %d %q, want 200 ok", i+1, code, body)
		}
		<-closed
	}
}

// A body-less GET leaves its connection in the fast path's pool for its
// endpoint, unless the fast path is off; a table without the endpoint
// drops its pool.
func TestFastPathPools(t *testing.T) {
	port := app(t, "one")
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port)))
	for _, off := range []bool{false, true} {
		r := NewRouter()
		if off {
			r.DisableFastPath()
		}
		r.Update(Options{}.Build(helloRoute(), []discoveryv1.EndpointSlice{slice("hello-1", port, true, "127.0.0.1")}))
		t.Cleanup(func() { closeIdle(r) })
		if code, _ := serve(t, r, "hello.default.localhost"); code != http.StatusOK {
			t.Fatalf("fast path off %t: GET = %d, want 200", off, code)
		}
		idle := 0
		if p := r.upstreams.load()[addr]; p != nil {
			idle = p.Idle()
		}
		if want := map[bool]int{false: 1, true: 0}[off]; idle != want {
			t.Errorf("fast path off %t: %d idle connections in the fast path's pool after one GET, want %d", off, idle, want)
		}
		r.Update(Options{}.Build(helloRoute(), nil))
		if p := r.upstreams.load()[addr]; p != nil {
			t.Errorf("fast path off %t: the pool of an endpoint the table no longer lists is kept", off)
		}
	}
}

// A POST (a body: the slow path) to an endpoint that refuses is retried
// on the next one, as a GET is on the fast path.
func TestSlowPathStillRetriesRefusedConnections(t *testing.T) {
	dead, live := closedPort(t), app(t, "live")
	second := slice("hello-1", live, true, "127.0.0.1")
	second.Name = "second"
	r := NewRouter()
	r.Update(Options{}.Build(helloRoute(), []discoveryv1.EndpointSlice{slice("hello-1", dead, true, "127.0.0.1"), second}))
	t.Cleanup(func() { closeIdle(r) })
	for range 4 {
		req := httptest.NewRequest(http.MethodPost, "http://hello.default.localhost/", nil)
		req.Body = io.NopCloser(strings.NewReader("payload"))
		req.ContentLength = 7
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("POST = %d %q, want 200 from the live endpoint", w.Code, w.Body)
		}
	}
}

// An upgrade (a websocket's GET) is no fast-path request: it goes
// through ReverseProxy, which switches protocols end to end.
func TestUpgradesPassThrough(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "echo" {
			http.Error(w, "want an upgrade to echo", http.StatusBadRequest)
			return
		}
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		brw.Flush()
		io.Copy(c, brw)
	}))
	t.Cleanup(app.Close)
	r := NewRouter()
	r.Update(Options{}.Build(helloRoute(), []discoveryv1.EndpointSlice{slice("hello-1", int32(app.Listener.Addr().(*net.TCPAddr).Port), true, "127.0.0.1")}))
	front := httptest.NewServer(r)
	t.Cleanup(front.Close)
	t.Cleanup(func() { closeIdle(r) })

	c, err := net.Dial("tcp", front.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: hello.default.localhost\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade answered %d, want 101", res.StatusCode)
	}
	io.WriteString(c, "ping")
	got := make([]byte, 4)
	if _, err := io.ReadFull(br, got); err != nil || string(got) != "ping" {
		t.Errorf("after the upgrade the app echoed %q, %v; want ping", got, err)
	}
}
