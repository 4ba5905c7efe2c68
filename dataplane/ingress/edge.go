package ingress

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	netv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	"github.com/knitops/knit/config"
)

// networkKey is config-network, for http-protocol.
var networkKey = types.NamespacedName{Namespace: config.SystemNamespace, Name: config.NetworkConfigName}

// newEdgeCache is the ingress's own cache of what only it reads and its
// Role grants by name or in knit-system alone: config-network (selected
// by name, as RestrictCache selects config-features; one cache holds one
// selector per kind, hence a second cache) and the Secrets labelled
// CertificateLabel in knit-system. The manager's cache stays as it was,
// in knit dev too, where other readers share it.
func newEdgeCache(mgr ctrl.Manager) (cache.Cache, error) {
	isCert, err := labels.NewRequirement(CertificateLabel, selection.Exists, nil)
	if err != nil {
		return nil, fmt.Errorf("certificate selector: %w", err)
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{networkKey.Namespace: {
				FieldSelector: fields.OneTermEqualSelector("metadata.name", networkKey.Name)}}},
			&corev1.Secret{}: {Namespaces: map[string]cache.Config{config.SystemNamespace: {
				LabelSelector: labels.NewSelector().Add(*isCert)}}},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("ingress edge cache: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("add ingress edge cache: %w", err)
	}
	return c, nil
}

// allOf maps any object to the table's one key.
func allOf[T client.Object](context.Context, T) []reconcile.Request {
	return []reconcile.Request{tableKey}
}

// readNetwork brings b.opts.Network up to date with config-network, as
// readFeatures does config-features: a missing ConfigMap is Knative's
// defaults, one the parser refuses is logged once and changes nothing.
func (b *tableBuilder) readNetwork(ctx context.Context) error {
	cm := &corev1.ConfigMap{}
	err := b.edge.Get(ctx, networkKey, cm, client.UnsafeDisableDeepCopy)
	switch {
	case apierrors.IsNotFound(err):
		b.opts.Network, b.networkVersion = nil, ""
		return nil
	case err != nil:
		return fmt.Errorf("get ConfigMap %s: %w", networkKey, err)
	case cm.ResourceVersion == b.networkVersion:
		return nil
	}
	b.networkVersion = cm.ResourceVersion
	n, err := config.ParseNetwork(cm.Data)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Ignoring invalid ConfigMap; the ingress keeps its previous http-protocol",
			"configmap", networkKey, "resourceVersion", cm.ResourceVersion)
		return nil
	}
	b.opts.Network = n
	return nil
}

// certCache parses each certificate Secret once per resourceVersion.
type certCache struct {
	parsed map[types.UID]parsedSecret
	index  certIndex
	// challenges are the HTTP-01 responses: host → token → key
	// authorization.
	challenges map[string]map[string]string
}

// parsedSecret is one Secret at one resourceVersion: its certificate, or
// nil when it could not be parsed (logged once).
type parsedSecret struct {
	version string
	cert    *certificate
}

// read lists the certificate Secrets and re-indexes them. A Secret that
// does not parse is logged once per version and left out: the others
// still serve.
func (c *certCache) read(ctx context.Context, edge client.Reader) error {
	secrets := &corev1.SecretList{}
	if err := edge.List(ctx, secrets, client.InNamespace(config.SystemNamespace), client.HasLabels{CertificateLabel}); err != nil {
		return fmt.Errorf("list certificate Secrets: %w", err)
	}
	next := make(map[types.UID]parsedSecret, len(secrets.Items))
	certs := make([]*certificate, 0, len(secrets.Items))
	challenges := map[string]map[string]string{}
	for i := range secrets.Items {
		s := &secrets.Items[i]
		if s.Labels[CertificateLabel] == netv1alpha1.CertificateLabelChallenge {
			addChallenge(challenges, s)
			continue
		}
		p, ok := c.parsed[s.UID]
		if !ok || p.version != s.ResourceVersion {
			p = parsedSecret{version: s.ResourceVersion}
			cert, err := parseCertificate(s)
			if err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "Not serving a certificate Secret", "secret", client.ObjectKeyFromObject(s))
			}
			p.cert = cert
		}
		next[s.UID] = p
		if p.cert != nil {
			certs = append(certs, p.cert)
		}
	}
	c.parsed, c.index, c.challenges = next, indexCertificates(certs), challenges
	return nil
}

// addChallenge files an HTTP-01 response Secret under its host and token.
// Only knit's controller writes Secrets in knit-system, but the response
// is served to the Internet, so one that is not a plain token is left out.
func addChallenge(challenges map[string]map[string]string, s *corev1.Secret) {
	host := strings.ToLower(string(s.Data[netv1alpha1.ChallengeHostKey]))
	token := string(s.Data[netv1alpha1.ChallengeTokenKey])
	keyAuth := string(s.Data[netv1alpha1.ChallengeKeyAuthorizationKey])
	if host == "" || !isToken(token) || !strings.HasPrefix(keyAuth, token+".") || !isToken(keyAuth[len(token)+1:]) {
		return
	}
	if challenges[host] == nil {
		challenges[host] = map[string]string{}
	}
	challenges[host][token] = keyAuth
}

// isToken says whether s is base64url without padding, as ACME tokens and
// account key thumbprints are (RFC 8555 §8.1, §8.3).
func isToken(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
