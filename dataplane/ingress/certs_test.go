package ingress

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

// testCert is a self-signed certificate for names, valid from notBefore
// to notAfter, as the PEM a kubernetes.io/tls Secret holds.
type testCert struct {
	certPEM, keyPEM []byte
	leaf            *x509.Certificate
}

func newTestCert(t testing.TB, notBefore, notAfter time.Time, names ...string) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return testCert{
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		leaf:    leaf,
	}
}

// secret is c as a certificate Secret named name in knit-system, for the
// hosts of namespace (any host when "").
func (c testCert) secret(name, namespace string) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: name, Labels: map[string]string{CertificateLabel: ""}},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: c.certPEM, corev1.TLSPrivateKeyKey: c.keyPEM},
	}
	if namespace != "" {
		s.Labels[CertificateNamespaceLabel] = namespace
	}
	return s
}

func mustParse(t testing.TB, s *corev1.Secret) *certificate {
	t.Helper()
	c, err := parseCertificate(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Which certificate a handshake gets: an exact name before a wildcard, a
// namespace's own before the operator's, a certificate of one namespace
// never for another's host, a valid one before an expired one, the later
// expiry among valid ones; nothing when no name matches.
func TestCertificateLookup(t *testing.T) {
	now := time.Now()
	valid := func(names ...string) testCert {
		return newTestCert(t, now.Add(-time.Hour), now.Add(24*time.Hour), names...)
	}
	operatorWildcard := valid("*.example.com")
	operatorExact := valid("shop.example.com")
	teamAWildcard := valid("*.team-a.example.com")
	teamAExact := valid("hello.team-a.example.com")
	teamAExpired := newTestCert(t, now.Add(-48*time.Hour), now.Add(-time.Hour), "old.team-a.example.com")
	teamALater := newTestCert(t, now.Add(-time.Hour), now.Add(72*time.Hour), "hello.team-a.example.com")
	teamANotYet := newTestCert(t, now.Add(time.Hour), now.Add(96*time.Hour), "hello.team-a.example.com")
	teamAOld := valid("old.team-a.example.com")
	idx := indexCertificates([]*certificate{
		mustParse(t, operatorWildcard.secret("wild", "")),
		mustParse(t, operatorExact.secret("shop", "")),
		mustParse(t, teamAWildcard.secret("a-wild", "team-a")),
		mustParse(t, teamAExact.secret("a-hello", "team-a")),
		mustParse(t, teamALater.secret("a-hello-renewed", "team-a")),
		mustParse(t, teamANotYet.secret("a-hello-future", "team-a")),
		mustParse(t, teamAExpired.secret("a-old-expired", "team-a")),
		mustParse(t, teamAOld.secret("a-old", "team-a")),
	})
	for _, tc := range []struct {
		name, server, namespace string
		want                    *testCert
	}{
		{"a namespace's exact name, the later of two valid", "hello.team-a.example.com", "team-a", &teamALater},
		{"case and a trailing dot do not matter", "HELLO.team-a.example.com.", "team-a", &teamALater},
		{"a namespace's wildcard before the operator's", "other.team-a.example.com", "team-a", &teamAWildcard},
		{"valid before expired", "old.team-a.example.com", "team-a", &teamAOld},
		{"another namespace's host gets the operator's wildcard, never team-a's", "hello.team-a.example.com", "team-b", nil},
		{"the operator's exact name", "shop.example.com", "team-b", &operatorExact},
		{"the operator's wildcard", "api.example.com", "team-b", &operatorWildcard},
		{"a host no Route has: the operator's only", "other.team-a.example.com", "", nil},
		{"a wildcard covers one label only", "a.b.example.com", "team-b", nil},
		{"no certificate names it", "hello.other.org", "team-a", nil},
	} {
		got := idx.lookup(tc.server, tc.namespace, now)
		switch {
		case tc.want == nil && got != nil:
			t.Errorf("%s: %s got a certificate for %v", tc.name, tc.server, got.Leaf.DNSNames)
		case tc.want != nil && (got == nil || got.Leaf.SerialNumber.Cmp(tc.want.leaf.SerialNumber) != 0):
			t.Errorf("%s: %s got %v, want the one for %v expiring %s", tc.name, tc.server, describe(got), tc.want.leaf.DNSNames, tc.want.leaf.NotAfter)
		}
	}
}

func describe(c *tls.Certificate) string {
	if c == nil {
		return "none"
	}
	return strings.Join(c.Leaf.DNSNames, ",") + " expiring " + c.Leaf.NotAfter.String()
}

// A Secret the ingress cannot serve says why.
func TestParseCertificateRefuses(t *testing.T) {
	now := time.Now()
	good := newTestCert(t, now, now.Add(time.Hour), "hello.example.com")
	other := newTestCert(t, now, now.Add(time.Hour), "other.example.com")
	for _, tc := range []struct {
		name   string
		secret func() *corev1.Secret
		want   string
	}{
		{"not a TLS Secret", func() *corev1.Secret { s := good.secret("s", ""); s.Type = corev1.SecretTypeOpaque; return s }, `type "Opaque", want "kubernetes.io/tls"`},
		{"a key of another certificate", func() *corev1.Secret {
			s := good.secret("s", "")
			s.Data[corev1.TLSPrivateKeyKey] = other.keyPEM
			return s
		}, "tls.crt and tls.key: tls: private key does not match public key"},
		{"no key", func() *corev1.Secret { s := good.secret("s", ""); delete(s.Data, corev1.TLSPrivateKeyKey); return s }, "tls.crt and tls.key:"},
		{"a common name alone", func() *corev1.Secret { return commonNameOnly(t).secret("s", "") }, "tls.crt names no DNS name"},
	} {
		_, err := parseCertificate(tc.secret())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// commonNameOnly is a certificate naming its host in the subject alone,
// which no current client accepts.
func commonNameOnly(t *testing.T) testCert {
	var c testCert
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "hello.example.com"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	c.certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	c.keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	return c
}

// routeIn is a Route of namespace at url with all traffic on revision.
func routeIn(namespace, name, url, revision string, annotations map[string]string) servingv1.Route {
	rt := route(name, nil, url, servingv1.TrafficTarget{RevisionName: revision, Percent: ptr.To[int64](100)})
	rt.Namespace, rt.Annotations = namespace, annotations
	return rt
}

// The server name comes from the network: any string picks at most a
// certificate that names it (exactly, or by a one-label wildcard), and
// never panics.
func FuzzCertificateLookup(f *testing.F) {
	now := time.Now()
	exact := newTestCert(f, now.Add(-time.Minute), now.Add(time.Hour), "hello.default.example.com")
	wild := newTestCert(f, now.Add(-time.Minute), now.Add(time.Hour), "*.example.com")
	idx := indexCertificates([]*certificate{mustParse(f, exact.secret("e", "default")), mustParse(f, wild.secret("w", ""))})
	for _, s := range []string{"hello.default.example.com", "api.example.com", "example.com", ".", "", "a..example.com", "HELLO.DEFAULT.EXAMPLE.COM."} {
		f.Add(s, "default")
	}
	f.Fuzz(func(t *testing.T, name, namespace string) {
		c := idx.lookup(name, namespace, now)
		if c == nil {
			return
		}
		if err := c.Leaf.VerifyHostname(strings.TrimSuffix(name, ".")); err != nil {
			t.Errorf("%q got a certificate for %v: %v", name, c.Leaf.DNSNames, err)
		}
	})
}
