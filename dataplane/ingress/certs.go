package ingress

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	netv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
)

// The labels of the Secrets the ingress reads, the networking API's.
const (
	CertificateLabel          = netv1alpha1.CertificateLabel
	CertificateNamespaceLabel = netv1alpha1.CertificateNamespaceLabel
)

// certificate is one parsed Secret.
type certificate struct {
	cert      *tls.Certificate // Leaf set
	namespace string           // CertificateNamespaceLabel, "" for any
	secret    string           // namespace/name, for logs
}

// certIndex finds a certificate by server name: exact DNS names and
// wildcards ("*.example.com" under "example.com").
type certIndex struct {
	exact, wildcard map[string][]*certificate
}

// indexCertificates files parsed certificates under the names they hold.
func indexCertificates(certs []*certificate) certIndex {
	idx := certIndex{exact: map[string][]*certificate{}, wildcard: map[string][]*certificate{}}
	for _, c := range certs {
		for _, name := range c.cert.Leaf.DNSNames {
			name = strings.ToLower(strings.TrimSuffix(name, "."))
			if parent, ok := strings.CutPrefix(name, "*."); ok {
				idx.wildcard[parent] = append(idx.wildcard[parent], c)
			} else {
				idx.exact[name] = append(idx.exact[name], c)
			}
		}
	}
	return idx
}

// lookup picks the certificate for name, served to a host of a Route in
// namespace ("" for a host no Route has): an exact name before a
// wildcard, a namespace's own before the operator's, and among equals one
// valid now with the latest expiry. nil if no certificate may serve name.
func (idx certIndex) lookup(name, namespace string, now time.Time) *tls.Certificate {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	label, parent, _ := strings.Cut(name, ".")
	wildcards := idx.wildcard[parent]
	if !isLabel(label) {
		wildcards = nil // a wildcard stands for one DNS label, not any text
	}
	for _, candidates := range [][]*certificate{idx.exact[name], wildcards} {
		if namespace != "" {
			if c := newest(candidates, namespace, now); c != nil {
				return c
			}
		}
		if c := newest(candidates, "", now); c != nil {
			return c
		}
	}
	return nil
}

// isLabel says whether s is one DNS label as hosts spell them: letters,
// digits and inner hyphens (underscores too, which some names carry).
func isLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// newest is the candidate of exactly namespace valid now with the latest
// NotAfter; failing that, the one of that namespace with the latest
// NotAfter (an expired certificate says more to a client than none).
func newest(candidates []*certificate, namespace string, now time.Time) *tls.Certificate {
	var best *certificate
	bestValid := false
	for _, c := range candidates {
		if c.namespace != namespace {
			continue
		}
		leaf := c.cert.Leaf
		valid := !now.Before(leaf.NotBefore) && !now.After(leaf.NotAfter)
		if best == nil || (valid && !bestValid) || (valid == bestValid && leaf.NotAfter.After(best.cert.Leaf.NotAfter)) {
			best, bestValid = c, valid
		}
	}
	if best == nil {
		return nil
	}
	return best.cert
}

// parseCertificate reads a kubernetes.io/tls Secret: tls.crt (the chain,
// leaf first) and tls.key.
func parseCertificate(s *corev1.Secret) (*certificate, error) {
	if s.Type != corev1.SecretTypeTLS {
		return nil, fmt.Errorf("type %q, want %q", s.Type, corev1.SecretTypeTLS)
	}
	pair, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, fmt.Errorf("tls.crt and tls.key: %w", err)
	}
	if pair.Leaf == nil {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("tls.crt: %w", err)
		}
	}
	if len(pair.Leaf.DNSNames) == 0 {
		return nil, fmt.Errorf("tls.crt names no DNS name (subjectAltName); a common name alone is not served")
	}
	return &certificate{cert: &pair, namespace: s.Labels[CertificateNamespaceLabel], secret: s.Namespace + "/" + s.Name}, nil
}
