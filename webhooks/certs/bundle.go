package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// Keys of the Secret that holds a Bundle.
const (
	CACertKey = "ca.crt"
	CertKey   = "tls.crt"
	KeyKey    = "tls.key"
)

// clockSkew backdates certificates so a node whose clock runs a little
// behind still accepts them.
const clockSkew = 5 * time.Minute

// Bundle is the serving certificate and the CA certificates the API
// server must trust for it, PEM-encoded as stored in the Secret. The CA's
// key is not kept: rotation makes a new CA, and CACert carries the
// previous CA too until it expires, so API servers still holding the old
// caBundle keep trusting whichever certificate a replica serves.
type Bundle struct {
	CACert, Cert, Key []byte
}

// FromData reads a Bundle from a Secret's data; a missing key leaves its
// field empty, which Valid reports.
func FromData(data map[string][]byte) Bundle {
	return Bundle{CACert: data[CACertKey], Cert: data[CertKey], Key: data[KeyKey]}
}

// Data is the Secret data that holds b.
func (b Bundle) Data() map[string][]byte {
	return map[string][]byte{CACertKey: b.CACert, CertKey: b.Cert, KeyKey: b.Key}
}

// Generate makes a new CA and a serving certificate for dnsNames, both
// valid for validity from now. The CA's key signs once and is dropped.
func Generate(now time.Time, validity time.Duration, dnsNames []string) (Bundle, error) {
	if len(dnsNames) == 0 {
		return Bundle{}, errors.New("generate webhook certificate: no DNS names")
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Bundle{}, fmt.Errorf("generate CA key: %w", err)
	}
	ca := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "knit webhook CA"},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := sign(ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return Bundle{}, fmt.Errorf("create CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return Bundle{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Bundle{}, fmt.Errorf("generate serving key: %w", err)
	}
	leaf := &x509.Certificate{
		Subject:     pkix.Name{CommonName: dnsNames[0]},
		DNSNames:    dnsNames,
		NotBefore:   now.Add(-clockSkew),
		NotAfter:    now.Add(validity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := sign(leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return Bundle{}, fmt.Errorf("sign serving certificate: %w", err)
	}
	b := Bundle{CACert: encode("CERTIFICATE", caDER), Cert: encode("CERTIFICATE", leafDER)}
	if b.Key, err = encodeKey(key); err != nil {
		return Bundle{}, err
	}
	return b, nil
}

func sign(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("certificate serial: %w", err)
	}
	tmpl.SerialNumber = serial
	return x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
}

func encode(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode key: %w", err)
	}
	return encode("EC PRIVATE KEY", der), nil
}

// Check reports why b cannot serve dnsNames until at least now+margin: a
// missing or unparsable part, a certificate not signed by the CA, a name
// it does not cover, or an expiry inside the margin. nil means keep it.
func (b Bundle) Check(now time.Time, margin time.Duration, dnsNames []string) error {
	pair, err := tls.X509KeyPair(b.Cert, b.Key)
	if err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(b.CACert) {
		return errors.New("CA certificate: no PEM certificate")
	}
	for _, name := range dnsNames {
		_, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: now.Add(margin)})
		if err != nil {
			return fmt.Errorf("serving certificate for %s at %s: %w", name, now.Add(margin).Format(time.RFC3339), err)
		}
	}
	return nil
}

// ServiceNames are the names the API server may use for a webhook Service.
func ServiceNames(service, namespace string) []string {
	return []string{
		service + "." + namespace + ".svc",
		service + "." + namespace + ".svc.cluster.local",
		service + "." + namespace,
		service,
	}
}

// WithPrevious returns b trusting also the first CA of previous, when that
// CA is still valid at now: the overlap that makes a rotation safe.
func (b Bundle) WithPrevious(previous []byte, now time.Time) Bundle {
	block, _ := pem.Decode(previous)
	if block == nil || block.Type != "CERTIFICATE" {
		return b
	}
	old, err := x509.ParseCertificate(block.Bytes)
	if err != nil || now.After(old.NotAfter) {
		return b
	}
	b.CACert = append(append([]byte(nil), b.CACert...), encode("CERTIFICATE", block.Bytes)...)
	return b
}
