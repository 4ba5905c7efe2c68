package activator

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// An upgrade (a websocket's handshake) passes through both ways and holds
// its slot until the connection closes.
func TestUpgradePassesThrough(t *testing.T) {
	q := newFakeQueue(t, true, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "echo" || r.Header.Get(proxyHeader) != proxyValue {
			http.Error(w, "want an echo upgrade from the activator", http.StatusBadRequest)
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		brw.Flush()
		io.Copy(conn, brw)
	})
	a, url := startActivator(t, Options{})
	a.SetEndpoints(rev, 1, []string{q.addr()})
	eventually(t, "the replica to be ready", readyIs(t, a, 1))

	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /ws HTTP/1.1\r\nHost: hello.example\r\nConnection: Upgrade\r\nUpgrade: echo\r\n%s: %s\r\n%s: %s\r\n\r\n",
		NamespaceHeader, rev.Namespace, RevisionHeader, rev.Name)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d %q, want 101", resp.StatusCode, b)
	}
	if _, inflight, _ := counts(t, a, rev); inflight != 1 {
		t.Errorf("in flight during the upgrade = %d, want 1", inflight)
	}
	for _, msg := range []string{"ping\n", "pong\n"} {
		io.WriteString(conn, msg)
		got, err := br.ReadString('\n')
		if err != nil || got != msg {
			t.Fatalf("echo of %q: %q, %v", msg, got, err)
		}
	}
	conn.Close()
	eventually(t, "the slot to be released", inflightIs(t, a, 0))
}

// A client speaking HTTP/2 without TLS (gRPC) reaches the replica over
// h2c.
func TestH2CPassesThrough(t *testing.T) {
	q := newFakeQueue(t, true, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s", r.Proto)
	})
	a, url := startActivator(t, Options{})
	a.SetEndpoints(rev, 0, []string{q.addr()})
	eventually(t, "the replica to be ready", readyIs(t, a, 1))

	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	for _, tc := range []struct {
		client *http.Client
		want   string
	}{{c, "HTTP/2.0"}, {newClient(t), "HTTP/1.1"}} {
		res := send(context.Background(), tc.client, http.MethodGet, url, rev, "")
		if res.status != http.StatusOK || res.body != tc.want {
			t.Errorf("got %v, want the replica to see %s", res, tc.want)
		}
	}
}

// A replica that went away refuses the connection; the request, which
// reached no app, moves to the other replica, and the gone one leaves the
// ready set.
func TestRefusedConnectionMovesToAnotherReplica(t *testing.T) {
	q1, q2 := newFakeQueue(t, true, reply("1")), newFakeQueue(t, true, reply("2"))
	a, url := startActivator(t, Options{})
	a.SetEndpoints(rev, 1, []string{q1.addr()})
	eventually(t, "q1 ready", readyIs(t, a, 1))
	a.SetEndpoints(rev, 1, []string{q1.addr(), q2.addr()})
	eventually(t, "q2 ready", readyIs(t, a, 2))

	q1.srv.Close()
	a.transport.CloseIdleConnections() // the probe's connection: the next dial is refused
	res := send(context.Background(), newClient(t), http.MethodPost, url, rev, "body")
	if res.status != http.StatusOK || res.body != "2" {
		t.Fatalf("got %v, want 200 from q2", res)
	}
	if _, inflight, ready := counts(t, a, rev); ready != 1 || inflight != 0 {
		t.Fatalf("ready %d, in flight %d; want 1, 0 (q1 demoted, its slot given back)", ready, inflight)
	}
}

// A request that reached an app is never retried, even when the app
// drops the connection without answering.
func TestNoRetryOnceTheAppWasReached(t *testing.T) {
	q1 := newFakeQueue(t, true, func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	})
	q2 := newFakeQueue(t, true, reply("2"))
	a, url := startActivator(t, Options{})
	a.SetEndpoints(rev, 1, []string{q1.addr()})
	eventually(t, "q1 ready", readyIs(t, a, 1))
	a.SetEndpoints(rev, 1, []string{q1.addr(), q2.addr()})
	eventually(t, "q2 ready", readyIs(t, a, 2))

	res := send(context.Background(), newClient(t), http.MethodPost, url, rev, "not twice")
	if res.status != http.StatusBadGateway || !strings.HasPrefix(res.body, "activator: error reaching revision default/hello: ") {
		t.Fatalf("got %v, want 502 naming the revision", res)
	}
	if n := q2.requests.Load(); n != 0 {
		t.Fatalf("q2 got %d requests, want none", n)
	}
	if n := q1.requests.Load(); n != 1 {
		t.Fatalf("q1 got %d requests, want 1", n)
	}
}
