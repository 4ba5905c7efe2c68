// Package acmetest runs Pebble, Let's Encrypt's ACME test server, on
// loopback for tests that obtain real certificates: StartPebble starts
// one (and pebble-challtestsrv beside it as its DNS server, answering
// 127.0.0.1 for every name), and Responder is an HTTP-01 solver to serve
// on the port Pebble validates against.
//
// The binaries come from `make tools` (hack/pebble): $KUBEBUILDER_ASSETS
// when set, as the Makefile sets it for the tests, else the bin directory
// of knit's module root. A missing binary fails the test, never skips it.
package acmetest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knitops/knit/internal/moduleroot"
)

// startTimeout bounds each process's start; both are up in well under a
// second on an idle machine.
const startTimeout = 30 * time.Second

// attempts is how often a start is tried on fresh ports: a free port can
// be taken between choosing and binding it.
const attempts = 3

// Pebble is a running Pebble ACME server.
type Pebble struct {
	// DirectoryURL is the ACME directory, https://127.0.0.1:<port>/dir.
	DirectoryURL string
	// HTTPClient trusts the certificate Pebble serves its API with.
	HTTPClient *http.Client
	// CABundle is that certificate as PEM, for a client configured by
	// text (config-network's acme-ca-bundle).
	CABundle []byte
	// HTTP01 listens on 127.0.0.1:HTTP01Port, the port Pebble sends every
	// HTTP-01 validation to (in place of 80): serve the challenge
	// responses on it (Serve), or close it for a CA that finds nothing
	// there. Held open from the start, so no one else can take the port.
	HTTP01 net.Listener
	// HTTP01Port is HTTP01's port.
	HTTP01Port int
	// DNSAddr is pebble-challtestsrv's DNS server, which Pebble resolves
	// every name with: it answers 127.0.0.1 (and no IPv6 address).
	DNSAddr string

	managementURL string
}

// Option configures StartPebble.
type Option func(*options)

type options struct {
	validity time.Duration
	blocked  []string
}

// WithValidity makes Pebble issue certificates valid for d (in whole
// seconds; Pebble's NotAfter is NotBefore+d-1s). The default is Pebble's
// 90 days.
func WithValidity(d time.Duration) Option {
	return func(o *options) { o.validity = d }
}

// WithBlockedDomains makes Pebble refuse orders for these domains and
// their subdomains, with an ACME rejectedIdentifier problem.
func WithBlockedDomains(domains ...string) Option {
	return func(o *options) { o.blocked = append(o.blocked, domains...) }
}

// StartPebble starts a Pebble for t and stops it when t ends. Each
// validation is real and fast: no random sleeps before validating
// (PEBBLE_VA_NOSLEEP), no nonces rejected at random
// (PEBBLE_WFE_NONCEREJECT=0), and valid authorizations almost never
// reused (PEBBLE_AUTHZREUSE=0; Pebble still reuses one in a hundred, so
// tests that need a fresh validation use a name or an account of their
// own). Pebble picks one of its profiles at random for an order that
// names none, so it is given exactly one.
func StartPebble(t testing.TB, opts ...Option) *Pebble {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	dir := t.TempDir()
	pebbleBin, challBin := binary(t, "pebble"), binary(t, "pebble-challtestsrv")
	certFile, keyFile, roots := serverCert(t, dir)
	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, DisableKeepAlives: true},
	}
	dnsAddr := startChallTestSrv(t, challBin)

	http01, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("acmetest: listening for HTTP-01 validations: %v", err)
	}
	t.Cleanup(func() { _ = http01.Close() })
	p := &Pebble{HTTPClient: client, HTTP01: http01, HTTP01Port: port(http01.Addr().String()), DNSAddr: dnsAddr}
	if p.CABundle, err = os.ReadFile(certFile); err != nil {
		t.Fatalf("acmetest: %v", err)
	}

	cfg := pebbleConfig{certFile: certFile, keyFile: keyFile, httpPort: p.HTTP01Port, opts: o}
	var lastErr error
	for range attempts {
		var api, mgmt string
		api, mgmt, lastErr = startPebble(t, pebbleBin, dir, dnsAddr, cfg, client)
		if lastErr == nil {
			p.DirectoryURL = "https://" + api + "/dir"
			p.managementURL = "https://" + mgmt
			return p
		}
	}
	t.Fatalf("acmetest: starting pebble: %v", lastErr)
	return nil
}

// Serve serves h on p.HTTP01 until t ends.
func (p *Pebble) Serve(t testing.TB, h http.Handler) {
	t.Helper()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(p.HTTP01) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// Roots is a pool of Pebble's root CA, which its certificates chain to.
// Pebble makes a new root each time it starts, and serves it on its
// management interface (/roots/0).
func (p *Pebble) Roots(t testing.TB) *x509.CertPool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.managementURL+"/roots/0", nil)
	if err != nil {
		t.Fatalf("acmetest: %v", err)
	}
	res, err := p.HTTPClient.Do(req)
	if err != nil {
		t.Fatalf("acmetest: fetching pebble's root: %v", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("acmetest: fetching pebble's root: %s %v", res.Status, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(body) {
		t.Fatalf("acmetest: pebble's root is not a PEM certificate: %.200q", body)
	}
	return pool
}

// binary is the path of a `make tools` binary.
func binary(t testing.TB, name string) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		root, err := moduleroot.Dir()
		if err != nil {
			t.Fatalf("acmetest: locating bin/%s: %v", name, err)
		}
		dir = filepath.Join(root, "bin")
	}
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("acmetest: no %s at %s (%v): run `make tools`", name, bin, err)
	}
	return bin
}

// serverCert writes a throwaway self-signed certificate for 127.0.0.1
// and localhost, which Pebble serves its API and management interface
// with, and returns a pool trusting it.
func serverCert(t testing.TB, dir string) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("acmetest: %v", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "acmetest pebble"},
		NotBefore:    now.Add(-time.Minute), NotAfter: now.Add(24 * time.Hour),
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:        true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("acmetest: %v", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("acmetest: %v", err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", keyDER)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("acmetest: %v", err)
	}
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return certFile, keyFile, roots
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatalf("acmetest: %v", err)
	}
}

// startChallTestSrv starts pebble-challtestsrv as a DNS server only
// (every challenge server disabled: the test serves HTTP-01 itself) and
// returns its address. It answers 127.0.0.1 for every A query and
// nothing for AAAA, so Pebble validates every name against loopback. It
// logs, rather than exits, when it cannot bind, so it counts as started
// once it answers a query.
func startChallTestSrv(t testing.TB, bin string) string {
	t.Helper()
	var lastErr error
	for range attempts {
		dnsAddr, mgmtAddr := freeAddr(t), freeAddr(t)
		proc := start(t, bin, nil,
			"-defaultIPv4", "127.0.0.1", "-defaultIPv6", "",
			"-http01", "", "-https01", "", "-tlsalpn01", "", "-doh", "",
			"-dnsserver", dnsAddr, "-management", mgmtAddr)
		lastErr = proc.waitReady(func(ctx context.Context) error { return resolves(ctx, dnsAddr) })
		if lastErr == nil {
			return dnsAddr
		}
		proc.stop()
	}
	t.Fatalf("acmetest: starting pebble-challtestsrv: %v", lastErr)
	return ""
}

// resolves asks the DNS server at addr, over TCP as Pebble does, for a
// name it knows nothing of, which it must answer with 127.0.0.1.
func resolves(ctx context.Context, addr string) error {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}}
	ips, err := r.LookupHost(ctx, "probe.acmetest.example.")
	if err != nil {
		return err
	}
	if len(ips) != 1 || ips[0] != "127.0.0.1" {
		return fmt.Errorf("probe.acmetest.example resolved to %v, want [127.0.0.1]", ips)
	}
	return nil
}

type pebbleConfig struct {
	certFile, keyFile string
	httpPort          int
	opts              options
}

// write writes Pebble's JSON configuration for API and management
// listeners at api and mgmt. tlsPort is where Pebble would send
// TLS-ALPN-01 validations, which Obtain never asks for: any port nothing
// listens on.
func (c pebbleConfig) write(path, api, mgmt string, tlsPort int) error {
	type profile struct {
		Description    string `json:"description"`
		ValidityPeriod uint64 `json:"validityPeriod,omitempty"`
	}
	cfg := map[string]any{"pebble": map[string]any{
		"listenAddress":                  api,
		"managementListenAddress":        mgmt,
		"certificate":                    c.certFile,
		"privateKey":                     c.keyFile,
		"httpPort":                       c.httpPort,
		"tlsPort":                        tlsPort,
		"ocspResponderURL":               "",
		"externalAccountBindingRequired": false,
		"domainBlocklist":                c.opts.blocked,
		"keyAlgorithm":                   "ecdsa",
		"profiles": map[string]profile{
			"default": {Description: "acmetest", ValidityPeriod: uint64(c.opts.validity / time.Second)},
		},
	}}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// startPebble starts Pebble on fresh ports and waits for its directory to
// answer. It returns the API and management addresses.
func startPebble(t testing.TB, bin, dir, dnsAddr string, cfg pebbleConfig, client *http.Client) (api, mgmt string, err error) {
	t.Helper()
	api, mgmt, alpn := freeAddr(t), freeAddr(t), freeAddr(t)
	path := filepath.Join(dir, "pebble.json")
	if err := cfg.write(path, api, mgmt, port(alpn)); err != nil {
		return "", "", fmt.Errorf("writing its configuration: %w", err)
	}
	env := []string{"PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_AUTHZREUSE=0"}
	proc := start(t, bin, env, "-config", path, "-dnsserver", dnsAddr)
	err = proc.waitReady(func(ctx context.Context) error {
		if err := answers(ctx, client, "https://"+api+"/dir"); err != nil {
			return err
		}
		return answers(ctx, client, "https://"+mgmt+"/roots/0")
	})
	if err != nil {
		proc.stop()
		return "", "", err
	}
	return api, mgmt, nil
}

func answers(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, res.Status)
	}
	return nil
}

// process is a child process whose output is kept for the test's log.
type process struct {
	t      testing.TB
	name   string
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
	once   sync.Once
}

// start starts bin with args, and env on top of this process's
// environment minus any PEBBLE_ variable (PEBBLE_VA_ALWAYS_VALID, say,
// would make every validation pass), and stops it when t ends.
func start(t testing.TB, bin string, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PEBBLE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childSysProcAttr()
	p := &process{t: t, name: filepath.Base(bin), cmd: cmd, out: out, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatalf("acmetest: starting %s: %v", bin, err)
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	t.Cleanup(p.stop)
	return p
}

// waitReady polls ready until it succeeds, the process exits or
// startTimeout passes.
func (p *process) waitReady(ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		probe, cancelProbe := context.WithTimeout(ctx, time.Second)
		err := ready(probe)
		cancelProbe()
		if err == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited (%v):\n%s", p.name, p.cmd.ProcessState, p.out.tail())
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %v\n%s", p.name, startTimeout, err, p.out.tail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop kills the process and waits for it; when the test failed, the
// test's log gets the end of the process's output.
func (p *process) stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Kill()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
		}
		if p.t.Failed() {
			p.t.Logf("%s's output:\n%s", p.name, p.out.tail())
		}
	})
}

// syncBuffer is the output of a process, written by exec's copying
// goroutine and read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// tail is the last 8 KiB of the output.
func (b *syncBuffer) tail() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	if len(s) > 8<<10 {
		s = "…" + s[len(s)-8<<10:]
	}
	return s
}

// freeAddr is a 127.0.0.1 address with a port nothing listens on now.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("acmetest: finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// port is the port of a host:port address.
func port(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}
