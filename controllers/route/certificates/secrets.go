package certificates

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	netv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/internal/acme"
)

// SecretName is the Secret in knit-system holding the certificate of the
// kind's object namespace/name ("route.<namespace>.<name>"). A namespace
// holds no dot, so the name is unambiguous though a DomainMapping's name
// (a domain) holds several; one too long for a Secret's name ends in a
// hash of the object's name instead.
func SecretName(kind, namespace, name string) string {
	s := kind + "." + namespace + "." + name
	if len(s) <= validation.DNS1123SubdomainMaxLength {
		return s
	}
	sum := sha256.Sum256([]byte(name))
	return kind + "." + namespace + "." + hex.EncodeToString(sum[:16])
}

// accountSecret holds knit's ACME account key, one per installation.
const accountSecret = "knit-acme-account"

// accountKeyKey is the account Secret's data key.
const accountKeyKey = "key"

// certificateSecret is what the ingress serves for the Route
// namespace/name: its namespace label keeps it to that namespace's hosts.
func certificateSecret(kind, namespace, name string, c *acme.Certificate) *corev1.Secret {
	labels := map[string]string{
		netv1alpha1.CertificateLabel:          "acme",
		netv1alpha1.CertificateNamespaceLabel: namespace,
	}
	if kind == "route" {
		labels[netv1alpha1.CertificateRouteLabel] = namespace + "." + name
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: SecretName(kind, namespace, name), Labels: labels},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: c.ChainPEM, corev1.TLSPrivateKeyKey: c.KeyPEM},
	}
}

// challengeSecret publishes one HTTP-01 response for the ingress. Its
// name hashes host and token, which may hold characters a name may not.
func challengeSecret(host, token, keyAuthorization string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: challengeName(host, token),
			Labels: map[string]string{netv1alpha1.CertificateLabel: netv1alpha1.CertificateLabelChallenge}},
		Data: map[string][]byte{
			netv1alpha1.ChallengeHostKey:             []byte(host),
			netv1alpha1.ChallengeTokenKey:            []byte(token),
			netv1alpha1.ChallengeKeyAuthorizationKey: []byte(keyAuthorization),
		},
	}
}

func challengeName(host, token string) string {
	sum := sha256.Sum256([]byte(host + "\x00" + token))
	return "acme-http01-" + hex.EncodeToString(sum[:8])
}

// held is the certificate a Secret holds, as far as Ensure cares.
type held struct {
	leaf *x509.Certificate
}

// parseHeld reads the leaf of a certificate Secret; nil when it holds
// none that parses.
func parseHeld(s *corev1.Secret) *held {
	pair, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil
	}
	return &held{leaf: leaf}
}

// covers says whether h names every host.
func (h *held) covers(hosts []string) bool {
	for _, host := range hosts {
		if !slices.Contains(h.leaf.DNSNames, host) {
			return false
		}
	}
	return true
}

// valid says whether h can be served at now.
func (h *held) valid(now time.Time) bool {
	return !now.Before(h.leaf.NotBefore) && now.Before(h.leaf.NotAfter)
}

// renewAt is when h is due for renewal.
func (h *held) renewAt() time.Time { return acme.RenewAt(h.leaf.NotBefore, h.leaf.NotAfter) }

// hostsKey identifies a set of hosts, in any order.
func hostsKey(hosts []string) string {
	sorted := slices.Sorted(slices.Values(hosts))
	return strings.Join(slices.Compact(sorted), ",")
}

// describe is a certificate for a message.
func describe(h *held) string {
	return fmt.Sprintf("the certificate valid until %s", h.leaf.NotAfter.UTC().Format(time.RFC3339))
}
