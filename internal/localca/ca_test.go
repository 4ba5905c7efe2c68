package localca

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func mustLoad(t *testing.T, dir string) *CA {
	t.Helper()
	ca, err := Load(dir)
	if err != nil {
		t.Fatalf("Load(%s): %v", dir, err)
	}
	return ca
}

func TestLoadTwiceSameCA(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "ca")
	first := mustLoad(t, dir)
	certPEM, err := os.ReadFile(first.CertPath())
	if err != nil {
		t.Fatal(err)
	}
	second := mustLoad(t, dir)
	if !bytes.Equal(first.cert.Raw, second.cert.Raw) {
		t.Error("second Load made a different CA")
	}
	if again, _ := os.ReadFile(second.CertPath()); !bytes.Equal(certPEM, again) {
		t.Error("second Load rewrote ca.pem")
	}
	if got, want := first.CertPath(), filepath.Join(dir, "ca.pem"); got != want {
		t.Errorf("CertPath() = %s, want %s", got, want)
	}

	for _, tc := range []struct {
		path string
		mode os.FileMode
	}{
		{dir, 0o700 | os.ModeDir},
		{filepath.Join(dir, "ca.pem"), 0o644},
		{filepath.Join(dir, "ca-key.pem"), 0o600},
	} {
		fi, err := os.Stat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != tc.mode {
			t.Errorf("%s: mode %v, want %v", tc.path, fi.Mode(), tc.mode)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("dir holds %v, want only ca.pem and ca-key.pem (no temporary files)", names)
	}
	keyPEM, _ := os.ReadFile(filepath.Join(dir, "ca-key.pem"))
	if !bytes.HasPrefix(keyPEM, []byte("-----BEGIN PRIVATE KEY-----\n")) {
		t.Errorf("ca-key.pem is not a PKCS#8 PEM: %.40q", keyPEM)
	}
}

func TestLoadRelativeDirGivesAbsolutePath(t *testing.T) {
	t.Chdir(t.TempDir())
	ca := mustLoad(t, "rel")
	if !filepath.IsAbs(ca.CertPath()) {
		t.Errorf("CertPath() = %s, want absolute", ca.CertPath())
	}
}

func TestLoadConcurrentMakesOneCA(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	cas := make([]*CA, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { cas[i], errs[i] = Load(dir) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Load %d: %v", i, errs[i])
		}
		if !bytes.Equal(cas[i].cert.Raw, cas[0].cert.Raw) {
			t.Fatalf("Load %d got a different CA from Load 0", i)
		}
	}
}

// TestLoadRefuses: a directory that does not hold a sound pair is an error
// naming the files, and nothing in it is replaced.
func TestLoadRefuses(t *testing.T) {
	a, b := mustLoad(t, t.TempDir()), mustLoad(t, t.TempDir())
	read := func(ca *CA, name string) []byte {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(ca.CertPath()), name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	// A leaf and its key: a sound pair, but no CA.
	leaf, err := a.GetCertificate(&tls.ClientHelloInfo{ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	leafKey, _ := x509.MarshalPKCS8PrivateKey(leaf.PrivateKey)
	// A CA made eleven years ago.
	oldCert, oldKey, err := newCA(time.Now().AddDate(-11, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	pemOf := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }
	leafPEM := []byte("-----BEGIN CERTIFICATE-----\n" + "MAo=" + "\n-----END CERTIFICATE-----\n")

	tests := []struct {
		name  string
		files map[string][]byte
		want  []string // in the error
	}{
		{"only ca.pem", map[string][]byte{"ca.pem": read(a, "ca.pem")},
			[]string{"ca.pem exists but", "ca-key.pem does not"}},
		{"only ca-key.pem", map[string][]byte{"ca-key.pem": read(a, "ca-key.pem")},
			[]string{"ca-key.pem exists but", "ca.pem does not"}},
		{"key of another CA", map[string][]byte{"ca.pem": read(a, "ca.pem"), "ca-key.pem": read(b, "ca-key.pem")},
			[]string{"ca-key.pem is not the key of", "ca.pem", "do not match"}},
		{"cert not PEM", map[string][]byte{"ca.pem": []byte("hello"), "ca-key.pem": read(a, "ca-key.pem")},
			[]string{"ca.pem holds no PEM CERTIFICATE"}},
		{"cert not DER", map[string][]byte{"ca.pem": leafPEM, "ca-key.pem": read(a, "ca-key.pem")},
			[]string{"ca.pem: x509"}},
		{"key not PEM", map[string][]byte{"ca.pem": read(a, "ca.pem"), "ca-key.pem": []byte("hello")},
			[]string{"ca-key.pem holds no PEM PRIVATE KEY"}},
		{"not a CA", map[string][]byte{"ca.pem": pemOf("CERTIFICATE", leaf.Certificate[0]), "ca-key.pem": pemOf("PRIVATE KEY", leafKey)},
			[]string{"ca.pem is not a CA certificate"}},
		{"expired", map[string][]byte{"ca.pem": pemOf("CERTIFICATE", oldCert), "ca-key.pem": pemOf("PRIVATE KEY", oldKey)},
			[]string{"ca.pem expired on", "make a new CA"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(dir)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != len(tc.files) {
				t.Errorf("dir holds %d files after the error, want the %d it had", len(entries), len(tc.files))
			}
			for name, data := range tc.files {
				if got, _ := os.ReadFile(filepath.Join(dir, name)); !bytes.Equal(got, data) {
					t.Errorf("%s was changed", name)
				}
			}
		})
	}
}

func TestCACertificate(t *testing.T) {
	ca := mustLoad(t, t.TempDir())
	c := ca.cert
	if !c.IsCA || !c.BasicConstraintsValid || c.MaxPathLen != 0 || !c.MaxPathLenZero {
		t.Errorf("basic constraints: IsCA %v valid %v MaxPathLen %d zero %v",
			c.IsCA, c.BasicConstraintsValid, c.MaxPathLen, c.MaxPathLenZero)
	}
	if c.KeyUsage != x509.KeyUsageCertSign|x509.KeyUsageCRLSign {
		t.Errorf("KeyUsage = %v", c.KeyUsage)
	}
	if !c.PermittedDNSDomainsCritical || len(c.PermittedDNSDomains) != 1 || c.PermittedDNSDomains[0] != "localhost" {
		t.Errorf("DNS constraints: critical %v, %v", c.PermittedDNSDomainsCritical, c.PermittedDNSDomains)
	}
	var ranges []string
	for _, r := range c.PermittedIPRanges {
		ranges = append(ranges, r.String())
	}
	if strings.Join(ranges, " ") != "127.0.0.0/8 ::1/128" {
		t.Errorf("IP constraints: %v", ranges)
	}
	if pub, ok := c.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
		t.Errorf("key is %T, want ECDSA P-256", c.PublicKey)
	}
	if years := c.NotAfter.Sub(c.NotBefore).Hours() / 24 / 365; years < 9.9 || years > 10.1 {
		t.Errorf("valid %.1f years, want 10", years)
	}
	if cn := c.Subject.CommonName; !strings.HasPrefix(cn, "knit dev local CA (") || !strings.Contains(cn, "@") {
		t.Errorf("CommonName = %q", cn)
	}
	if c.SerialNumber.Sign() <= 0 || c.SerialNumber.BitLen() > 128 {
		t.Errorf("serial %v", c.SerialNumber)
	}
}

// TestNameConstraintsEnforced signs leaves by hand with the CA's key, as
// whoever stole it would, and has Go's verifier judge them against
// Pool(): the constraints are in the certificate, not just in
// GetCertificate.
func TestNameConstraintsEnforced(t *testing.T) {
	ca := mustLoad(t, t.TempDir())
	tests := []struct {
		name  string
		dns   []string
		ips   []net.IP
		check string // DNSName for Verify, if any
		ok    bool
	}{
		{name: "example.com", dns: []string{"example.com"}, check: "example.com"},
		{name: "example.com, not checked by name", dns: []string{"example.com"}},
		{name: "localhost.example.com", dns: []string{"localhost.example.com"}},
		{name: "notlocalhost", dns: []string{"notlocalhost"}},
		{name: "localhost and a real domain", dns: []string{"hello.localhost", "bank.example"}, check: "hello.localhost"},
		{name: "public address", ips: []net.IP{net.ParseIP("10.1.2.3")}},
		{name: "IPv6 non-loopback", ips: []net.IP{net.ParseIP("2001:db8::1")}},
		{name: "localhost", dns: []string{"localhost"}, check: "localhost", ok: true},
		{name: "under localhost", dns: []string{"hello.default.localhost"}, check: "hello.default.localhost", ok: true},
		{name: "loopback addresses", ips: []net.IP{net.ParseIP("127.0.0.2"), net.IPv6loopback}, check: "127.0.0.2", ok: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			tmpl := &x509.Certificate{
				SerialNumber: big.NewInt(42),
				NotBefore:    time.Now().Add(-time.Minute),
				NotAfter:     time.Now().Add(time.Hour),
				KeyUsage:     x509.KeyUsageDigitalSignature,
				ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
				DNSNames:     tc.dns,
				IPAddresses:  tc.ips,
			}
			der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
			if err != nil {
				t.Fatal(err)
			}
			leaf, err := x509.ParseCertificate(der)
			if err != nil {
				t.Fatal(err)
			}
			_, err = leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: tc.check})
			if tc.ok {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			var invalid x509.CertificateInvalidError
			if !errors.As(err, &invalid) || invalid.Reason != x509.CANotAuthorizedForThisName {
				t.Fatalf("Verify = %v, want CANotAuthorizedForThisName", err)
			}
		})
	}
}

// TestCAOnlyForServers: the CA's EKU keeps its leaves to server auth.
func TestCAOnlyForServers(t *testing.T) {
	ca := mustLoad(t, t.TempDir())
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7),
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		DNSNames:     []string{"client.localhost"},
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	_, err = leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	var invalid x509.CertificateInvalidError
	if !errors.As(err, &invalid) || invalid.Reason != x509.IncompatibleUsage {
		t.Fatalf("Verify for client auth = %v, want IncompatibleUsage", err)
	}
}
