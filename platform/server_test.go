package platform

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/knitops/knit/internal/poll"
)

// TestServerDrains: after the stop signal a server keeps answering while
// it reports not ready, lets a request in flight finish, and only then
// stops accepting.
func TestServerDrains(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, _ *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "slow")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	srv, err := Listen("test", "127.0.0.1:0", mux)
	if err != nil {
		t.Fatal(err)
	}
	srv.QuietPeriod = 5 * time.Second // the window this test works in, not a bound on anything
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()

	get := func(path string) (string, error) {
		resp, err := http.Get(srv.URL() + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if body, err := get("/"); err != nil || body != "ok" {
		t.Fatalf("before stop: %q %v", body, err)
	}
	if err := srv.ReadyCheck(nil); err != nil {
		t.Fatalf("ready before stop: %v", err)
	}
	slow := make(chan string, 1)
	go func() { b, _ := get("/slow"); slow <- b }()
	<-entered

	stop()
	poll.Until(t, "not ready once draining", 10*time.Millisecond, 5*time.Second, func(context.Context) (bool, string) {
		err := srv.ReadyCheck(nil)
		return err != nil, "still ready"
	})
	if body, err := get("/"); err != nil || body != "ok" {
		t.Errorf("during the quiet period: %q %v, want still served", body, err)
	}
	close(release)
	if b := <-slow; b != "slow" {
		t.Errorf("request in flight across the stop: %q, want its answer", b)
	}
	if err := <-done; err != nil {
		t.Errorf("Start after drain: %v", err)
	}
	if _, err := get("/"); err == nil {
		t.Error("still accepting after the drain")
	}
}

// A ListenTLS server says https:// and answers over TLS with HTTP/2 to a
// client that offers it; a plain server stays http:// once serving,
// though net/http fills in its TLSConfig to offer HTTP/2.
func TestListenTLSServesHTTPS(t *testing.T) {
	cert, pool := testCertificate(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) })
	srv, err := ListenTLS("https", "127.0.0.1:0", h, &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Listen("http", "127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go srv.Start(ctx)
	go plain.Start(ctx)

	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	resp, err := c.Get(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(srv.URL(), "https://") || string(body) != "HTTP/2.0" {
		t.Errorf("%s answered %q, want HTTP/2.0 over TLS", srv.URL(), body)
	}
	poll.Until(t, "the plain server serving", 10*time.Millisecond, 5*time.Second, func(context.Context) (bool, string) {
		resp, err := http.Get(plain.URL())
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return strings.HasPrefix(plain.URL(), "http://"), plain.URL()
	})
}

// testCertificate is a self-signed certificate for 127.0.0.1 and a pool
// trusting it.
func testCertificate(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
