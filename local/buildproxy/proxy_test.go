package buildproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	"golang.org/x/net/dns/dnsmessage"
)

// upstream is a server on loopback that says what reached it.
func upstream(t *testing.T, tlsToo bool) *httptest.Server {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "path=%s proxy-auth=%q forwarded-for=%q", r.URL.Path, r.Header.Get("Proxy-Authorization"), r.Header.Get("X-Forwarded-For"))
	})
	var srv *httptest.Server
	if tlsToo {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	return srv
}

// serve runs a proxy for allow on loopback and returns its address.
func serve(t *testing.T, allow ...string) string {
	t.Helper()
	list, err := ParseAllowList(allow...)
	if err != nil {
		t.Fatal(err)
	}
	return serveConfig(t, Config{Allow: list, Log: testr.New(t)})
}

// serveConfig runs a proxy for c on loopback and returns its address.
func serveConfig(t *testing.T, c Config) string {
	t.Helper()
	p := New(c)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(l) }()
	t.Cleanup(func() {
		_ = p.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return l.Addr().String()
}

// client goes through the proxy at addr, with credentials of its own for
// the proxy, which must not be passed on.
func client(proxy string, base *http.Transport) *http.Client {
	tr := base
	if tr == nil {
		tr = &http.Transport{}
	}
	tr.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: proxy, User: url.UserPassword("step", "secret")})
	return &http.Client{Transport: tr}
}

func TestForwardsPlainHTTPToAllowedHostsOnly(t *testing.T) {
	up := upstream(t, false)
	host := strings.TrimPrefix(up.URL, "http://")
	_, port, _ := net.SplitHostPort(host)
	for _, tc := range []struct {
		name, allow, url string
		status           int
		says             []string // words in the status line and the body
	}{
		{name: "allowed address and port", allow: host, url: up.URL + "/simple/", status: 200,
			says: []string{`path=/simple/ proxy-auth="" forwarded-for=""`}},
		{name: "host not allowed", allow: host, url: "http://not-allowed.invalid/pkg", status: 403,
			says: []string{"not-allowed.invalid:80", "--build-allow-host not-allowed.invalid:80", "Allowed now: " + host}},
		{name: "other port of an allowed address", allow: "127.0.0.1", url: up.URL, status: 403,
			says: []string{"127.0.0.1:" + port, "--build-allow-host"}},
		{name: "allowed name that resolves to loopback", allow: "localhost:" + port, url: "http://localhost:" + port + "/", status: 403,
			says: []string{"loopback", "localhost:" + port + ": it resolves to ", "reached only when the allow list names that address"}},
		{name: "nothing allowed", url: up.URL, status: 403, says: []string{"Allowed now: nothing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var allow []string
			if tc.allow != "" {
				allow = []string{tc.allow}
			}
			resp, err := client(serve(t, allow...), nil).Get(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %q, want %d\n%s", resp.Status, tc.status, body)
			}
			for _, w := range tc.says {
				if !strings.Contains(string(body), w) {
					t.Errorf("body %q does not say %q", body, w)
				}
			}
			if tc.status == 403 && (!strings.HasPrefix(resp.Status, "403 Forbidden by knit dev: ") || !strings.Contains(resp.Status, "--build-allow-host")) {
				t.Errorf("status line %q does not name --build-allow-host: clients show it, not the body", resp.Status)
			}
		})
	}
}

func TestTunnelsHTTPSToAllowedHostsOnly(t *testing.T) {
	up := upstream(t, true)
	host := strings.TrimPrefix(up.URL, "https://")
	proxy := serve(t, host, "*.example.org")
	tr := up.Client().Transport.(*http.Transport).Clone()
	resp, err := client(proxy, tr).Get(up.URL + "/wheel")
	if err != nil {
		t.Fatalf("https through an allowed CONNECT: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `path=/wheel proxy-auth="" forwarded-for=""`; string(body) != want {
		t.Errorf("through the tunnel: %q, want %q", body, want)
	}

	for _, tc := range []struct {
		authority string
		status    string // the start of the status line
	}{
		{"files.pythonhosted.org:443", "HTTP/1.1 403 Forbidden by knit dev: files.pythonhosted.org:443 is not allowed (knit dev --build-allow-host)"},
		{"example.org:443", "HTTP/1.1 403 Forbidden by knit dev: example.org:443"},
		{"a.example.org:8443", "HTTP/1.1 403 Forbidden by knit dev: a.example.org:8443"},
		{"a.example.invalid.:443", "HTTP/1.1 403 Forbidden by knit dev: a.example.invalid:443"},
		{"no-port.example.org", "HTTP/1.1 400 Bad Request"},
		{"bad_name.example.org:443", "HTTP/1.1 400 Bad Request"},
	} {
		if got := connect(t, proxy, tc.authority); !strings.HasPrefix(got, tc.status) {
			t.Errorf("CONNECT %s: %q, want %q", tc.authority, got, tc.status)
		}
	}
}

// An allowed wildcard name is tunnelled to what it resolves to, when
// the allow list names that address too; else the address is refused.
func TestTunnelsWildcardNames(t *testing.T) {
	up := upstream(t, true)
	host := strings.TrimPrefix(up.URL, "https://")
	_, port, _ := net.SplitHostPort(host)
	for _, tc := range []struct {
		allow  []string
		status string
	}{
		{[]string{"*.knit.test:" + port, host}, "HTTP/1.1 200 "},
		{[]string{"*.knit.test:" + port}, "HTTP/1.1 403 Forbidden by knit dev: a.b.knit.test:" + port + " resolves to " + host + ", refused"},
		{[]string{"*.other.test:" + port, host}, "HTTP/1.1 403 Forbidden by knit dev: a.b.knit.test:" + port + " is not allowed"},
	} {
		list, err := ParseAllowList(tc.allow...)
		if err != nil {
			t.Fatal(err)
		}
		proxy := serveConfig(t, Config{Allow: list, Log: testr.New(t), Resolver: loopbackResolver(t)})
		if got := connect(t, proxy, "a.b.knit.test:"+port); !strings.HasPrefix(got, tc.status) {
			t.Errorf("allow %q: CONNECT a.b.knit.test:%s: %q, want %q", tc.allow, port, got, tc.status)
		}
	}
}

// loopbackResolver answers every A query with 127.0.0.1 and every other
// with no address, in memory: no query leaves the test.
func loopbackResolver(t *testing.T) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			if err := answerLoopback(server); err != nil {
				t.Logf("fake DNS: %v", err)
			}
		}()
		return client, nil
	}}
}

// answerLoopback answers one query in DNS's TCP framing, which Go's
// resolver speaks on a connection that is not a PacketConn.
func answerLoopback(c net.Conn) error {
	var n [2]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		return err
	}
	msg := make([]byte, int(n[0])<<8|int(n[1]))
	if _, err := io.ReadFull(c, msg); err != nil {
		return err
	}
	var q dnsmessage.Message
	if err := q.Unpack(msg); err != nil || len(q.Questions) != 1 {
		return fmt.Errorf("query: %v", err)
	}
	a := dnsmessage.Message{Header: dnsmessage.Header{ID: q.ID, Response: true, Authoritative: true}, Questions: q.Questions}
	if question := q.Questions[0]; question.Type == dnsmessage.TypeA {
		a.Answers = []dnsmessage.Resource{{
			Header: dnsmessage.ResourceHeader{Name: question.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 60},
			Body:   &dnsmessage.AResource{A: [4]byte{127, 0, 0, 1}},
		}}
	}
	out, err := a.Pack()
	if err != nil {
		return err
	}
	_, err = c.Write(append([]byte{byte(len(out) >> 8), byte(len(out))}, out...))
	return err
}

// connect sends one CONNECT and returns the status line.
func connect(t *testing.T, proxy, authority string) string {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic c3RlcDpzZWNyZXQ=\r\n\r\n", authority, authority)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("CONNECT %s: %v", authority, err)
	}
	return strings.TrimSpace(line)
}

// A step that talks to the proxy as if it were a server learns what it is.
func TestDirectRequestIsToldToUseTheProxy(t *testing.T) {
	proxy := serve(t, "pypi.org")
	resp, err := http.Get("http://" + proxy + "/simple/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "HTTP_PROXY") {
		t.Errorf("%s %q, want 400 saying to set HTTP_PROXY", resp.Status, body)
	}
}
