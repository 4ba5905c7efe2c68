package controlplane

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
)

func TestServingCertVerifiesAgainstCA(t *testing.T) {
	state := t.TempDir()
	ca, err := LoadOrCreateCA(state)
	if err != nil {
		t.Fatalf("LoadOrCreateCA: %v", err)
	}
	certPEM, keyPEM, err := ca.IssueServingCert("127.0.0.1", "localhost")
	if err != nil {
		t.Fatalf("IssueServingCert: %v", err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatalf("certificate and key do not pair: %v", err)
	}
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("parse serving certificate: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca.CAPEM()) {
		t.Fatal("CAPEM is not a PEM certificate")
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		opts := x509.VerifyOptions{Roots: roots, DNSName: host, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		if _, err := cert.Verify(opts); err != nil {
			t.Errorf("verify for %s: %v", host, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "10.0.0.1"}); err == nil {
		t.Error("certificate verifies for 10.0.0.1, a host it was not issued for")
	}

	other, err := LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatalf("second CA: %v", err)
	}
	strangers := x509.NewCertPool()
	strangers.AppendCertsFromPEM(other.CAPEM())
	if _, err := cert.Verify(x509.VerifyOptions{Roots: strangers, DNSName: "127.0.0.1"}); err == nil {
		t.Error("certificate verifies against an unrelated CA")
	}
}

func TestCAIsReusedAcrossLoads(t *testing.T) {
	state := t.TempDir()
	first, err := LoadOrCreateCA(state)
	if err != nil {
		t.Fatalf("create CA: %v", err)
	}
	second, err := LoadOrCreateCA(state)
	if err != nil {
		t.Fatalf("load CA: %v", err)
	}
	if !bytes.Equal(first.CAPEM(), second.CAPEM()) {
		t.Error("second load made a new CA; kubeconfigs and caBundles from the first run would break")
	}
	fi, err := os.Stat(filepath.Join(pkiDir(state), "ca.key"))
	if err != nil {
		t.Fatalf("stat CA key: %v", err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("ca.key mode = %o, want 600", perm)
	}
	if _, _, err := first.IssueServingCert(); err == nil {
		t.Error("IssueServingCert without hosts succeeded")
	}
}
