package ingress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	netv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

// serveTLS serves r over HTTPS (HTTP/1.1 and h2) on loopback with
// r.TLSConfig(port, fallback) and returns the address.
func serveTLS(t *testing.T, r *Router, port int, fallback func(*tls.ClientHelloInfo) (*tls.Certificate, error)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: r, TLSConfig: r.TLSConfig(port, fallback), Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(true)
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// httpsClient trusts roots and dials addr whatever the URL's host, so the
// URL's host is the SNI and Host a real client would send.
func httpsClient(addr string, roots ...*x509.Certificate) *http.Client {
	pool := x509.NewCertPool()
	for _, c := range roots {
		pool.AddCert(c)
	}
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// httpsAnswer is what a client gets for url: the body, the protocol and
// the serial of the certificate it was shown.
type httpsAnswer struct {
	body, proto string
	serial      string
}

func fetch(t *testing.T, c *http.Client, url string) (httpsAnswer, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return httpsAnswer{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return httpsAnswer{body: string(body), proto: resp.Proto, serial: resp.TLS.PeerCertificates[0].SerialNumber.String()}, nil
}

// Over HTTPS a client gets the certificate for the host it names (SNI) —
// the Route namespace's own before the operator's wildcard — HTTP/2 when
// it offers it, and the same Revision as over HTTP; http-protocol
// Redirected redirects plain HTTP only. A name no certificate serves
// fails the handshake, unless a fallback issues one.
func TestRouterServesHTTPSBySNI(t *testing.T) {
	now := time.Now()
	own := newTestCert(t, now.Add(-time.Minute), now.Add(time.Hour), "hello.default.localhost")
	wildcard := newTestCert(t, now.Add(-time.Minute), now.Add(time.Hour), "*.default.localhost")
	redirected, err := config.ParseNetwork(map[string]string{"http-protocol": "Redirected"})
	if err != nil {
		t.Fatal(err)
	}
	tbl := Options{Network: redirected}.Build(hello(), helloSlices(t))
	tbl.certs = indexCertificates([]*certificate{mustParse(t, own.secret("own", "default")), mustParse(t, wildcard.secret("wild", ""))})
	r := NewRouter()
	r.Update(tbl)
	addr := serveTLS(t, r, 8443, nil)
	c := httpsClient(addr, own.leaf, wildcard.leaf)

	for _, tc := range []struct {
		url  string
		want httpsAnswer
	}{
		{"https://hello.default.localhost/", httpsAnswer{"two tag= default=", "HTTP/2.0", own.leaf.SerialNumber.String()}},
		{"https://old-hello.default.localhost/", httpsAnswer{"one tag= default=", "HTTP/2.0", wildcard.leaf.SerialNumber.String()}},
	} {
		got, err := fetch(t, c, tc.url)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		if got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.url, got, tc.want)
		}
	}
	// HTTP/1.1 over TLS too, for clients that offer no h2.
	h1 := httpsClient(addr, own.leaf)
	h1.Transport.(*http.Transport).ForceAttemptHTTP2 = false
	h1.Transport.(*http.Transport).TLSClientConfig.NextProtos = []string{"http/1.1"}
	if got, err := fetch(t, h1, "https://hello.default.localhost/"); err != nil || got.proto != "HTTP/1.1" {
		t.Errorf("HTTP/1.1 over TLS: %+v, %v", got, err)
	}

	if _, err := fetch(t, c, "https://hello.other.example/"); err == nil {
		t.Error("a name no certificate serves: the handshake succeeded")
	}
	fallback := newTestCert(t, now.Add(-time.Minute), now.Add(time.Hour), "hello.other.example")
	withFallback := NewRouter()
	withFallback.Update(tbl)
	addr = serveTLS(t, withFallback, 8443, func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		pair, err := tls.X509KeyPair(fallback.certPEM, fallback.keyPEM)
		return &pair, err
	})
	got, err := fetch(t, httpsClient(addr, fallback.leaf), "https://hello.other.example/")
	if err != nil || got.serial != fallback.leaf.SerialNumber.String() || got.body != "knit: no route for host \"hello.other.example\"\n" {
		t.Errorf("a name no certificate serves, with a fallback: %+v, %v", got, err)
	}
}

// http-protocol Redirected (config-network, or a Route's annotation)
// answers plain HTTP with 301 to the same URL over HTTPS on the HTTPS
// port clients use; an ACME HTTP-01 challenge is never redirected; a
// Route annotated Enabled is served.
func TestRouterRedirectsHTTPToHTTPS(t *testing.T) {
	slices := helloSlices(t)
	enabled := routeIn("default", "open", "http://open.default.localhost", "hello-1", map[string]string{config.HTTPProtocolAnnotation: "Enabled"})
	annotated := routeIn("default", "strict", "http://strict.default.localhost", "hello-1", map[string]string{config.HTTPOptionAnnotation: "redirected"})
	defaults, _ := config.ParseNetwork(nil)
	redirected, _ := config.ParseNetwork(map[string]string{"http-protocol": "Redirected"})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		network *config.Network
		port    int
		url     string
		want    string
	}{
		{redirected, 8443, "http://hello.default.localhost/a/b?c=d", "301 https://hello.default.localhost:8443/a/b?c=d"},
		{redirected, 443, "http://hello.default.localhost:8080/", "301 https://hello.default.localhost/"},
		{redirected, 8443, "http://hello.default.localhost/.well-known/acme-challenge/token", "200 two tag= default="},
		{redirected, 8443, "http://open.default.localhost/", "200 one tag= default="},
		{defaults, 8443, "http://hello.default.localhost/", "200 two tag= default="},
		{defaults, 8443, "http://strict.default.localhost/x", "301 https://strict.default.localhost:8443/x"},
	} {
		r := NewRouter()
		r.TLSConfig(tc.port, nil)
		r.Update(Options{Network: tc.network}.Build(append(hello(), enabled, annotated), slices))
		front := httptest.NewServer(r)
		req, _ := http.NewRequest(http.MethodGet, tc.url, nil)
		req.URL.Host = front.Listener.Addr().String()
		req.Host = hostPort(tc.url)
		resp, err := noRedirect.Do(req)
		front.Close()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := resp.Status[:3] + " " + resp.Header.Get("Location")
		if resp.StatusCode == http.StatusOK {
			got = resp.Status[:3] + " " + string(body)
		}
		if got != tc.want {
			t.Errorf("http-protocol %s, %s: got %q, want %q", tc.network.HTTPProtocol, tc.url, got, tc.want)
		}
	}
}

func hostPort(rawURL string) string {
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		panic(err)
	}
	return req.URL.Host
}

// A handshake before the first table waits for it rather than failing
// for a certificate not read yet.
func TestHandshakeWaitsForTheFirstTable(t *testing.T) {
	now := time.Now()
	own := newTestCert(t, now.Add(-time.Minute), now.Add(time.Hour), "hello.default.localhost")
	r := NewRouter()
	addr := serveTLS(t, r, 8443, nil)
	done := make(chan error, 1)
	go func() {
		_, err := fetch(t, httpsClient(addr, own.leaf), "https://hello.default.localhost/")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the handshake ended before any table: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	tbl := Options{}.Build([]servingv1.Route{routeIn("default", "hello", "http://hello.default.localhost", "hello-2", nil)}, helloSlices(t))
	tbl.certs = indexCertificates([]*certificate{mustParse(t, own.secret("own", ""))})
	r.Update(tbl)
	if err := <-done; err != nil {
		t.Errorf("after the first table: %v", err)
	}
}

// A browser's HTTP/2 over TLS reaches the Revision as HTTP/1.1, which
// every app speaks; gRPC over TLS stays HTTP/2 (h2c behind the ingress).
func TestNegotiatedH2ReachesTheAppAsHTTP1UnlessGRPC(t *testing.T) {
	app := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) }))
	app.Config.Protocols = new(http.Protocols)
	app.Config.Protocols.SetHTTP1(true)
	app.Config.Protocols.SetUnencryptedHTTP2(true)
	app.Start()
	t.Cleanup(app.Close)
	port := int32(app.Listener.Addr().(*net.TCPAddr).Port)

	now := time.Now()
	cert := newTestCert(t, now.Add(-time.Minute), now.Add(time.Hour), "hello.default.localhost")
	tbl := Options{}.Build([]servingv1.Route{routeIn("default", "hello", "http://hello.default.localhost", "hello-1", nil)},
		[]discoveryv1.EndpointSlice{slice("hello-1", port, true, "127.0.0.1")})
	tbl.certs = indexCertificates([]*certificate{mustParse(t, cert.secret("c", ""))})
	r := NewRouter()
	r.Update(tbl)
	c := httpsClient(serveTLS(t, r, 8443, nil), cert.leaf)
	for contentType, want := range map[string]string{"": "HTTP/1.1", "text/html": "HTTP/1.1", "application/grpc": "HTTP/2.0", "application/grpc+proto": "HTTP/2.0", "application/grpcx": "HTTP/1.1"} {
		req, _ := http.NewRequest(http.MethodPost, "https://hello.default.localhost/", nil)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 2 || string(body) != want {
			t.Errorf("content-type %q over %s: the app saw %s, want %s", contentType, resp.Proto, body, want)
		}
	}
}

// The ingress answers an ACME CA's HTTP-01 request with the response
// knit's controller published for that host and token, over plain HTTP
// even when the Route redirects; other challenge paths, other hosts and
// HTTPS go to the Route; a response that is not a plain token is never
// served.
func TestRouterAnswersACMEChallenges(t *testing.T) {
	challenges := map[string]map[string]string{}
	for _, s := range []struct{ host, token, keyAuth string }{
		{"HELLO.default.localhost", "tok_en-1", "tok_en-1.thumb_print"},
		{"hello.default.localhost", "evil", "evil.<script>"},
		{"hello.default.localhost", "mismatch", "other.thumb"},
	} {
		addChallenge(challenges, &corev1.Secret{Data: map[string][]byte{
			netv1alpha1.ChallengeHostKey: []byte(s.host), netv1alpha1.ChallengeTokenKey: []byte(s.token), netv1alpha1.ChallengeKeyAuthorizationKey: []byte(s.keyAuth)}})
	}
	redirected, _ := config.ParseNetwork(map[string]string{"http-protocol": "Redirected"})
	tbl := Options{Network: redirected}.Build(hello(), helloSlices(t))
	tbl.challenges = challenges
	r := NewRouter()
	r.Update(tbl)
	front := httptest.NewServer(r)
	defer front.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct{ host, path, want string }{
		{"hello.default.localhost:80", "/.well-known/acme-challenge/tok_en-1", "200 tok_en-1.thumb_print"},
		{"hello.default.localhost", "/.well-known/acme-challenge/evil", "200 two tag= default="},
		{"hello.default.localhost", "/.well-known/acme-challenge/mismatch", "200 two tag= default="},
		{"hello.default.localhost", "/.well-known/acme-challenge/other", "200 two tag= default="},
		{"old-hello.default.localhost", "/.well-known/acme-challenge/tok_en-1", "200 one tag= default="},
		{"hello.default.localhost", "/", "301 "},
	} {
		req, _ := http.NewRequest(http.MethodGet, front.URL+tc.path, nil)
		req.Host = tc.host
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.Status[:3] + " " + string(body); !strings.HasPrefix(got, tc.want) || (tc.want != "301 " && got != tc.want) {
			t.Errorf("%s%s: %q, want %q", tc.host, tc.path, got, tc.want)
		}
	}
}

// A challenge Secret's data is served to the Internet: only a plain
// token and its key authorization ever are.
func FuzzAddChallenge(f *testing.F) {
	f.Add("hello.example.com", "tok", "tok.thumb")
	f.Add("h", "a b", "a b.c")
	f.Fuzz(func(t *testing.T, host, token, keyAuth string) {
		challenges := map[string]map[string]string{}
		addChallenge(challenges, &corev1.Secret{Data: map[string][]byte{
			netv1alpha1.ChallengeHostKey: []byte(host), netv1alpha1.ChallengeTokenKey: []byte(token), netv1alpha1.ChallengeKeyAuthorizationKey: []byte(keyAuth)}})
		for _, byToken := range challenges {
			for tok, ka := range byToken {
				if !isToken(tok) || !strings.HasPrefix(ka, tok+".") || !isToken(strings.TrimPrefix(ka, tok+".")) {
					t.Errorf("served %q for token %q", ka, tok)
				}
			}
		}
	})
}
