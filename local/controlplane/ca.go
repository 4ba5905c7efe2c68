package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

const (
	caValidity      = 10 * 365 * 24 * time.Hour
	servingValidity = 365 * 24 * time.Hour
	// clockSkew backdates certificates so a client whose clock is a little
	// behind does not reject one issued a second ago.
	clockSkew = 5 * time.Minute
)

// CA signs the serving certificates of the API server and of knit dev's
// admission webhooks. It is created once per state directory and reused,
// so a kubeconfig or a webhook caBundle written earlier stays valid.
type CA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

// LoadOrCreateCA returns the CA kept in <stateDir>/pki, creating it on
// first use. knit dev calls it directly when it runs against someone
// else's API server and still needs to sign its webhook certificate.
func LoadOrCreateCA(stateDir string) (*CA, error) {
	dir := pkiDir(stateDir)
	certPath, keyPath := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	certPEM, err := os.ReadFile(certPath)
	if errors.Is(err, os.ErrNotExist) {
		// The key is written before the certificate, so a missing
		// certificate means no CA was ever completed: start over.
		return createCA(certPath, keyPath)
	}
	if err != nil {
		return nil, fmt.Errorf("read CA: %w", err)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("read CA key (delete %s to start over): %w", dir, err)
	}
	ca, err := parseCA(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("load CA from %s (delete it to start over): %w", dir, err)
	}
	if time.Now().After(ca.cert.NotAfter) {
		return nil, fmt.Errorf("CA in %s expired on %s: delete it to start over", dir, ca.cert.NotAfter.Format(time.DateOnly))
	}
	return ca, nil
}

func createCA(certPath, keyPath string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "knit dev CA"},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	keyPEM, err := encodeECKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode CA key: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := writeSecret(keyPath, keyPEM); err != nil {
		return nil, fmt.Errorf("write CA key: %w", err)
	}
	if err := writeSecret(certPath, certPEM); err != nil {
		return nil, fmt.Errorf("write CA certificate: %w", err)
	}
	return parseCA(certPEM, keyPEM)
}

func parseCA(certPEM, keyPEM []byte) (*CA, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("ca.crt holds no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse ca.crt: %w", err)
	}
	key, err := decodeECKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("ca.key: %w", err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, errors.New("ca.key does not belong to ca.crt")
	}
	return &CA{cert: cert, key: key, certPEM: certPEM}, nil
}

// CAPEM is the CA certificate, for kubeconfigs and webhook caBundles.
func (ca *CA) CAPEM() []byte { return append([]byte(nil), ca.certPEM...) }

// IssueServingCert signs a fresh TLS server certificate for hosts (IP
// addresses or DNS names) with a new key. Serving certificates are cheap
// and reissued on every start; only the CA is kept.
func (ca *CA) IssueServingCert(hosts ...string) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, errors.New("issue serving certificate: no hosts")
	}
	return ca.issue(hosts[0], hosts, x509.ExtKeyUsageServerAuth)
}

// IssuePeerCert is a certificate for hosts that both serves and
// authenticates as a client: etcd's, which its member presents to its
// own peer listener.
func (ca *CA) IssuePeerCert(hosts ...string) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, errors.New("issue peer certificate: no hosts")
	}
	return ca.issue(hosts[0], hosts, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
}

// IssueClientCert is a client certificate for cn: how the API server
// proves itself to etcd.
func (ca *CA) IssueClientCert(cn string) (certPEM, keyPEM []byte, err error) {
	return ca.issue(cn, nil, x509.ExtKeyUsageClientAuth)
}

func (ca *CA) issue(cn string, hosts []string, usages ...x509.ExtKeyUsage) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key for %s: %w", cn, err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     now.Add(servingValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usages,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("sign certificate for %s: %w", cn, err)
	}
	keyPEM, err = encodeECKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encode key for %s: %w", cn, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

func randomSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("certificate serial: %w", err)
	}
	return serial, nil
}
