package gitserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key,
// and returns their files; the certificate is its own CA.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "knit-gitserver test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// With TLS on, git pushes and clones over HTTPS trusting the server's CA,
// and a request in clear text to the same port, token and all, never
// reaches the repositories.
func TestTLS(t *testing.T) {
	certFile, keyFile := selfSigned(t)
	cfg, err := TLSConfig(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{})
	var served atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		h.srv.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(tls.NewListener(ln, cfg)) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := ln.Addr().String()
	url := "https://git:" + testToken + "@" + addr + "/git/app.git"

	work := h.workRepo()
	h.commit(work, "service.yaml", "kind: Service\n")
	if out, err := h.run(work, "push", url, "main"); err == nil {
		t.Fatalf("a push not trusting the server's CA succeeded:\n%s", out)
	}
	h.git(work, "config", "http.sslCAInfo", certFile)
	h.git(work, "push", "-q", url, "main")
	h.nextPush()
	clone := filepath.Join(t.TempDir(), "clone")
	h.git("", "-c", "http.sslCAInfo="+certFile, "clone", "-q", url, clone)
	if data, err := os.ReadFile(filepath.Join(clone, "service.yaml")); err != nil || string(data) != "kind: Service\n" {
		t.Errorf("clone over HTTPS: service.yaml = %q, %v", data, err)
	}

	before := served.Load()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/git/app.git/info/refs?service=git-upload-pack", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("git", testToken)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(body), "refs/heads/main") {
			t.Errorf("a clear-text request was answered %d: %s", resp.StatusCode, body)
		}
	}
	if served.Load() != before {
		t.Error("a clear-text request reached the Git server")
	}
}

// A renewed certificate is served without a restart.
func TestTLSReloads(t *testing.T) {
	certFile, keyFile := selfSigned(t)
	cfg, err := TLSConfig(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	first, err := cfg.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	newCert, newKey := selfSigned(t)
	for src, dst := range map[string]string{newCert: certFile, newKey: keyFile} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(time.Minute)
		if err := os.Chtimes(dst, later, later); err != nil {
			t.Fatal(err)
		}
	}
	second, err := cfg.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(first.Certificate[0]) == string(second.Certificate[0]) {
		t.Error("the renewed certificate is not served")
	}
	if _, err := TLSConfig(filepath.Join(t.TempDir(), "missing.crt"), keyFile); err == nil {
		t.Error("TLSConfig of a missing certificate succeeded")
	}
}
