package domainmapping

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	netv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1beta1 "github.com/knitops/knit/api/serving/v1beta1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/route/certificates"
)

// certificateKind names DomainMappings' certificate Secrets in
// knit-system (certificates.SecretName), whichever way they came: spec.tls
// copied, or obtained from the ACME CA.
const certificateKind = "domainmapping"

// certificate sets CertificateProvisioned and, once a certificate serves
// the domain, its https:// URL, and says when to look again. Only a
// claimed domain gets one: a namespace must not obtain, or publish, a
// certificate for a domain it does not hold.
func (r *Reconciler) certificate(ctx context.Context, dm *servingv1beta1.DomainMapping, claimed bool, before *servingv1beta1.DomainMappingStatus, n *config.Network) (time.Duration, error) {
	switch {
	case dm.Spec.TLS != nil && claimed:
		return 0, r.copyCertificate(ctx, dm)
	case dm.Spec.TLS != nil:
		dm.Status.MarkCertificateNotReady(servingv1beta1.ReasonCertificateNotReady, "the certificate is served once this namespace holds the domain")
		return 0, nil
	}
	why := tlsOff(dm, n)
	if why == "" && r.certs == nil {
		why = "this installation obtains no certificates"
	}
	if why != "" {
		if hadCertificate(before) {
			if err := r.release(ctx, dm); err != nil {
				return 0, err
			}
		}
		dm.Status.MarkTLSNotEnabled(why)
		return 0, nil
	}
	if !claimed {
		dm.Status.MarkCertificateNotReady(servingv1beta1.ReasonCertificateNotReady, "a certificate is obtained once this namespace holds the domain")
		return 0, nil
	}
	out, err := r.certs.Ensure(ctx, dm, []string{strings.ToLower(dm.Name)}, n.ACME)
	if err != nil {
		return 0, err
	}
	switch out.State {
	case certificates.Ready:
		dm.Status.MarkCertificateReady(out.Secret)
		r.httpsURL(dm)
	case certificates.Pending:
		dm.Status.MarkCertificateNotReady(out.Reason, out.Message)
	case certificates.Failed:
		dm.Status.MarkCertificateProvisionFailed(out.Reason, out.Message)
	}
	return out.RecheckAfter, nil
}

// tlsOff says why dm gets no certificate from the CA; "" when it should.
func tlsOff(dm *servingv1beta1.DomainMapping, n *config.Network) string {
	if !n.ExternalDomainTLS {
		return "external-domain-tls is not enabled"
	}
	if key := config.ExternalDomainTLSDisabledBy(dm.Annotations); key != "" {
		return "disabled by the annotation " + key
	}
	return ""
}

// hadCertificate says whether status shows a certificate was wanted, so
// turning TLS off deletes it once and not at every reconcile.
func hadCertificate(status *servingv1beta1.DomainMappingStatus) bool {
	c := status.GetCondition(servingv1beta1.DomainMappingConditionCertificateProvisioned)
	return c != nil && c.Reason != servingv1beta1.ReasonTLSNotEnabled
}

// copyCertificate puts spec.tls's Secret where the ingress reads
// certificates, labelled with dm's namespace so it answers for that
// namespace's hosts alone. The ingress, which faces the Internet, never
// reads a tenant's Secrets itself. The copy follows the Secret: every
// reconcile compares them, and a mapping with spec.tls is reconciled
// every followSecret (knit watches no tenant's Secrets), well within the
// month before expiry that renewers such as cert-manager leave.
func (r *Reconciler) copyCertificate(ctx context.Context, dm *servingv1beta1.DomainMapping) error {
	name := dm.Spec.TLS.SecretName
	src := &corev1.Secret{}
	if err := r.reader.Get(ctx, types.NamespacedName{Namespace: dm.Namespace, Name: name}, src); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			dm.Status.MarkCertificateProvisionFailed("SecretNotFound", fmt.Sprintf("Secret %q in namespace %s: %v; the domain is served over HTTP meanwhile", name, dm.Namespace, reasonOf(err)))
			return nil
		}
		return fmt.Errorf("get Secret %s/%s: %w", dm.Namespace, name, err)
	}
	if src.Type != corev1.SecretTypeTLS || len(src.Data[corev1.TLSCertKey]) == 0 || len(src.Data[corev1.TLSPrivateKeyKey]) == 0 {
		dm.Status.MarkCertificateProvisionFailed("SecretNotTLS", fmt.Sprintf("Secret %q is not a kubernetes.io/tls Secret with tls.crt and tls.key; the domain is served over HTTP meanwhile", name))
		return nil
	}
	copied := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: certificates.SecretName(certificateKind, dm.Namespace, dm.Name),
			Labels: map[string]string{netv1alpha1.CertificateLabel: "domainmapping", netv1alpha1.CertificateNamespaceLabel: dm.Namespace}},
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: src.Data[corev1.TLSCertKey], corev1.TLSPrivateKeyKey: src.Data[corev1.TLSPrivateKeyKey]},
	}
	if err := r.store(ctx, copied); err != nil {
		return err
	}
	dm.Status.MarkCertificateExternallyProvided(name)
	r.httpsURL(dm)
	return nil
}

// followSecret is how often a spec.tls Secret is compared with its copy.
const followSecret = 5 * time.Minute

func reasonOf(err error) string {
	if apierrors.IsForbidden(err) {
		return "knit may not read it (the chart's domainMappingSecretNamespaces)"
	}
	return "not found"
}

// store creates or updates a Secret in knit-system.
func (r *Reconciler) store(ctx context.Context, s *corev1.Secret) error {
	old := &corev1.Secret{}
	err := r.reader.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: s.Name}, old)
	switch {
	case apierrors.IsNotFound(err):
		err = r.client.Create(ctx, s)
	case err == nil:
		if string(old.Data[corev1.TLSCertKey]) == string(s.Data[corev1.TLSCertKey]) &&
			string(old.Data[corev1.TLSPrivateKeyKey]) == string(s.Data[corev1.TLSPrivateKeyKey]) && old.Type == s.Type {
			return nil
		}
		old.Labels, old.Data, old.Type = s.Labels, s.Data, s.Type
		err = r.client.Update(ctx, old)
	}
	if err != nil {
		return fmt.Errorf("store certificate Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
}

// release deletes dm's certificate Secret in knit-system, however it
// came there.
func (r *Reconciler) release(ctx context.Context, dm *servingv1beta1.DomainMapping) error {
	if r.certs != nil {
		return r.certs.Release(ctx, dm.Namespace, dm.Name)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: certificates.SecretName(certificateKind, dm.Namespace, dm.Name)}}
	if err := r.client.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the certificate of DomainMapping %s/%s: %w", dm.Namespace, dm.Name, err)
	}
	return nil
}

// httpsURL makes dm's URL and address https://, on knit dev's HTTPS port.
func (r *Reconciler) httpsURL(dm *servingv1beta1.DomainMapping) {
	url := "https://" + dm.Name
	if r.urlPortTLS != 0 && r.urlPortTLS != 443 {
		url = "https://" + net.JoinHostPort(dm.Name, strconv.Itoa(r.urlPortTLS))
	}
	dm.Status.URL, dm.Status.Address = url, &duckv1.Addressable{URL: url}
}
