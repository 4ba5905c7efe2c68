package localca

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// serve runs an HTTPS server on loopback whose certificates all come from
// ca.GetCertificate, answering each request with its protocol and host.
func serve(t *testing.T, ca *CA, protos []string) string {
	t.Helper()
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{GetCertificate: ca.GetCertificate, NextProtos: protos})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %s", r.Proto, r.Host)
		}),
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// client trusts only ca and dials addr whatever the URL's host, as a
// resolver sending *.localhost to loopback would.
func client(ca *CA, addr string, protos []string) *http.Client {
	var d net.Dialer
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, addr)
			},
			TLSClientConfig:   &tls.Config{RootCAs: ca.Pool(), NextProtos: protos},
			ForceAttemptHTTP2: len(protos) > 0 && protos[0] == "h2",
		},
	}
}

func TestHTTPSOnLoopback(t *testing.T) {
	ca := mustLoad(t, t.TempDir())
	both, h1 := []string{"h2", "http/1.1"}, []string{"http/1.1"}
	tests := []struct {
		name            string
		serverProtos    []string
		clientProtos    []string
		host            string // in the URL
		wantProto       string // ALPN
		wantDNS, wantIP string
	}{
		{"service host, h2", both, both, "hello.default.localhost", "h2", "hello.default.localhost", ""},
		{"service host, server speaks http/1.1 only", h1, both, "hello.default.localhost", "http/1.1", "hello.default.localhost", ""},
		{"service host, client speaks http/1.1 only", both, h1, "hello.default.localhost", "http/1.1", "hello.default.localhost", ""},
		{"localhost", both, both, "localhost", "h2", "localhost", ""},
		{"mixed case and trailing dot", both, both, "Hello.Default.LocalHost.", "h2", "hello.default.localhost", ""},
		{"IPv4 address, no SNI", both, both, "127.0.0.1", "h2", "", "127.0.0.1"},
		{"IPv6 address, no SNI", both, both, "[::1]", "h2", "", "127.0.0.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			addr := serve(t, ca, tc.serverProtos)
			_, port, _ := net.SplitHostPort(addr)
			resp, err := client(ca, addr, tc.clientProtos).Get("https://" + tc.host + ":" + port + "/")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if got := resp.TLS.NegotiatedProtocol; got != tc.wantProto {
				t.Errorf("ALPN %q, want %q", got, tc.wantProto)
			}
			if wantMajor := map[string]int{"h2": 2, "http/1.1": 1}[tc.wantProto]; resp.ProtoMajor != wantMajor {
				t.Errorf("response over %s, want HTTP/%d", resp.Proto, wantMajor)
			}
			if !strings.Contains(string(body), tc.host+":"+port) {
				t.Errorf("server saw %q, want host %s:%s", body, tc.host, port)
			}
			leaf := resp.TLS.PeerCertificates[0]
			if tc.wantDNS != "" && (len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != tc.wantDNS) {
				t.Errorf("leaf names %v, want [%s]", leaf.DNSNames, tc.wantDNS)
			}
			if tc.wantIP != "" && fmt.Sprint(leaf.IPAddresses) != "[127.0.0.1 ::1]" {
				t.Errorf("leaf addresses %v, want [127.0.0.1 ::1]", leaf.IPAddresses)
			}
		})
	}
}

// TestHandshakeRefusedForOtherNames: a client asking for a real domain
// gets no certificate; the server's handshake error says which names are
// served.
func TestHandshakeRefusedForOtherNames(t *testing.T) {
	ca := mustLoad(t, t.TempDir())
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{GetCertificate: ca.GetCertificate})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	serverErr := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			serverErr <- err
			return
		}
		defer c.Close()
		serverErr <- c.(*tls.Conn).Handshake()
	}()

	conn, err := tls.Dial("tcp", l.Addr().String(), &tls.Config{ServerName: "example.com", RootCAs: ca.Pool()})
	if err == nil {
		conn.Close()
		t.Fatal("handshake for example.com succeeded")
	}
	srvErr := <-serverErr
	if srvErr == nil {
		t.Fatal("server handshake succeeded")
	}
	for _, want := range []string{`"example.com"`, "localhost", ".localhost", "127.0.0.1", "::1"} {
		if !strings.Contains(srvErr.Error(), want) {
			t.Errorf("server error %q does not mention %s", srvErr, want)
		}
	}
}

func TestGetCertificateNames(t *testing.T) {
	ca := mustLoad(t, t.TempDir())
	tests := []struct {
		sni     string
		wantDNS string // "" with ok: the address leaf
		ok      bool
	}{
		{"localhost", "localhost", true},
		{"hello.default.localhost", "hello.default.localhost", true},
		{"HELLO.Default.localhost", "hello.default.localhost", true},
		{"hello.default.localhost.", "hello.default.localhost", true},
		{"localhost.", "localhost", true},
		{"a_b.x-y.localhost", "a_b.x-y.localhost", true},
		{"", "", true},
		{"127.0.0.1", "", true},
		{"::1", "", true},
		{"example.com", "", false},
		{"localhost.example.com", "", false},
		{"hello.localhost.com", "", false},
		{"notlocalhost", "", false},
		{"10.0.0.1", "", false},
		{".localhost", "", false},
		{"a..localhost", "", false},
		{"*.localhost", "", false},
		{"a b.localhost", "", false},
		{strings.Repeat("a", 64) + ".localhost", "", false},
		{strings.Repeat("abcdefgh.", 30) + "localhost", "", false}, // 279 characters
	}
	for _, tc := range tests {
		t.Run(tc.sni, func(t *testing.T) {
			cert, err := ca.GetCertificate(&tls.ClientHelloInfo{ServerName: tc.sni})
			if !tc.ok {
				if err == nil {
					t.Fatalf("issued %v", cert.Leaf.DNSNames)
				}
				if !strings.Contains(err.Error(), "localhost and names under .localhost") {
					t.Errorf("error %q does not say which names are served", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			leaf := cert.Leaf
			if tc.wantDNS == "" {
				if len(leaf.DNSNames) != 0 || fmt.Sprint(leaf.IPAddresses) != "[127.0.0.1 ::1]" {
					t.Errorf("leaf for %v %v, want the addresses 127.0.0.1 and ::1", leaf.DNSNames, leaf.IPAddresses)
				}
			} else if len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != tc.wantDNS || len(leaf.IPAddresses) != 0 {
				t.Errorf("leaf for %v %v, want [%s]", leaf.DNSNames, leaf.IPAddresses, tc.wantDNS)
			}
		})
	}
}

func TestLeaf(t *testing.T) {
	ca := mustLoad(t, t.TempDir())
	now := time.Now().Truncate(time.Second)
	ca.now = func() time.Time { return now }
	a, err := ca.GetCertificate(&tls.ClientHelloInfo{ServerName: "a.localhost"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ca.GetCertificate(&tls.ClientHelloInfo{ServerName: "b.localhost"})
	if err != nil {
		t.Fatal(err)
	}
	leaf := a.Leaf
	if !leaf.NotBefore.Equal(now.Add(-time.Minute)) || !leaf.NotAfter.Equal(now.Add(30*24*time.Hour)) {
		t.Errorf("valid %v to %v, want a minute before %v to 30 days after", leaf.NotBefore, leaf.NotAfter, now)
	}
	if len(leaf.ExtKeyUsage) != 1 || leaf.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth || leaf.IsCA {
		t.Errorf("ExtKeyUsage %v IsCA %v", leaf.ExtKeyUsage, leaf.IsCA)
	}
	if leaf.SerialNumber.Sign() <= 0 || leaf.SerialNumber.BitLen() > 128 || leaf.SerialNumber.Cmp(b.Leaf.SerialNumber) == 0 {
		t.Errorf("serials %v and %v", leaf.SerialNumber, b.Leaf.SerialNumber)
	}
	ka, ok := a.PrivateKey.(*ecdsa.PrivateKey)
	if !ok || ka.Curve != elliptic.P256() {
		t.Fatalf("key is %T, want ECDSA P-256", a.PrivateKey)
	}
	if ka.Equal(b.PrivateKey) || ka.PublicKey.Equal(ca.cert.PublicKey) {
		t.Error("leaves share a key")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "a.localhost", CurrentTime: now}); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

// TestIssuedOnceUnderConcurrency: handshakes racing for one name share
// one issuance and one certificate.
func TestIssuedOnceUnderConcurrency(t *testing.T) {
	ca := mustLoad(t, t.TempDir())
	const n = 50
	certs := make([]*tls.Certificate, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			certs[i], errs[i] = ca.GetCertificate(&tls.ClientHelloInfo{ServerName: "hello.default.localhost"})
		})
	}
	// Other names at the same time, for the race detector.
	for i := range n {
		wg.Go(func() {
			<-start
			ca.GetCertificate(&tls.ClientHelloInfo{ServerName: fmt.Sprintf("s%d.default.localhost", i%7)})
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if certs[i] != certs[0] {
			t.Fatalf("call %d got a different certificate from call 0", i)
		}
	}
	if got := ca.issued.Load(); got != 1+7 {
		t.Errorf("issued %d leaves, want 8 (one per name)", got)
	}
}

// TestWaiterGivesUpWithHandshake: a handshake waiting on another's
// issuance of its name stops waiting when its own context ends.
func TestWaiterGivesUpWithHandshake(t *testing.T) {
	ca := mustLoad(t, t.TempDir())
	stuck := &entry{key: "slow.localhost", done: make(chan struct{})} // never done
	ca.mu.Lock()
	ca.add(stuck)
	ca.mu.Unlock()

	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	go tls.Client(c2, &tls.Config{ServerName: "slow.localhost"}).Handshake()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	result := make(chan error, 1)
	go func() {
		result <- tls.Server(c1, &tls.Config{GetCertificate: ca.GetCertificate}).HandshakeContext(ctx)
	}()
	select {
	case err := <-result:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("handshake = %v, want its deadline", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("handshake still waiting for the stuck issuance")
	}
}

func TestCacheBounded(t *testing.T) {
	ca := mustLoad(t, t.TempDir())
	ca.maxCached = 10
	get := func(name string) *tls.Certificate {
		t.Helper()
		c, err := ca.GetCertificate(&tls.ClientHelloInfo{ServerName: name})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := get("n0.localhost")
	for i := 1; i < 35; i++ {
		get(fmt.Sprintf("n%d.localhost", i))
		get("n0.localhost") // kept in use, so never the least recent
		ca.mu.Lock()
		size, listed := len(ca.cache), ca.lru.Len()
		ca.mu.Unlock()
		if size > 10 || size != listed {
			t.Fatalf("after %d names: %d cached, %d listed; want at most 10 of each", i+1, size, listed)
		}
	}
	if get("n0.localhost") != first {
		t.Error("the name in constant use was evicted")
	}
	issued := ca.issued.Load()
	get("n1.localhost") // long evicted
	if ca.issued.Load() != issued+1 {
		t.Error("an evicted name was not issued anew")
	}
	get("n34.localhost") // recent
	if ca.issued.Load() != issued+1 {
		t.Error("a recent name was issued anew")
	}
}

func TestReissueNearExpiry(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		later time.Duration
		same  bool
	}{
		{time.Hour, true},
		{19 * day, true},          // 11 days of 30 left
		{21 * day, false},         // 9 days left: under a third
		{31 * day, false},         // expired
		{-2 * time.Minute, false}, // clock set back before NotBefore
	}
	for _, tc := range tests {
		t.Run(tc.later.String(), func(t *testing.T) {
			ca := mustLoad(t, t.TempDir())
			var mu sync.Mutex
			now := time.Now()
			ca.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			hello := &tls.ClientHelloInfo{ServerName: "hello.default.localhost"}
			old, err := ca.GetCertificate(hello)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			now = now.Add(tc.later)
			mu.Unlock()
			got, err := ca.GetCertificate(hello)
			if err != nil {
				t.Fatal(err)
			}
			if (got == old) != tc.same {
				t.Fatalf("same certificate %v, want %v", got == old, tc.same)
			}
			if !tc.same {
				if got.Leaf.SerialNumber.Cmp(old.Leaf.SerialNumber) == 0 {
					t.Error("reissued leaf has the old serial")
				}
				if !ca.fresh(got.Leaf) {
					t.Error("reissued leaf is not fresh")
				}
				if again, _ := ca.GetCertificate(hello); again != got {
					t.Error("reissued leaf was not cached")
				}
			}
		})
	}
}

// TestFailureNotCached: a failed issuance fails that handshake only.
func TestFailureNotCached(t *testing.T) {
	ca := mustLoad(t, t.TempDir())
	now := ca.cert.NotAfter.Add(time.Hour) // the CA has expired
	ca.now = func() time.Time { return now }
	hello := &tls.ClientHelloInfo{ServerName: "hello.localhost"}
	if _, err := ca.GetCertificate(hello); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("GetCertificate with the CA expired = %v, want an error saying so", err)
	}
	if len(ca.cache) != 0 || ca.lru.Len() != 0 {
		t.Fatalf("the failure was cached")
	}
	now = time.Now()
	if _, err := ca.GetCertificate(hello); err != nil {
		t.Fatalf("GetCertificate once the clock is right: %v", err)
	}
}
