//go:build !unit

package domainmapping

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1beta1 "github.com/knitops/knit/api/serving/v1beta1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/route/certificates"
)

// spec.tls's Secret is copied where the ingress reads certificates,
// labelled for the mapping's namespace alone, and the URL turns https; a
// renewed Secret is copied again; a missing one says so and leaves the
// domain on HTTP; deleting the mapping deletes the copy.
func TestDomainMappingBringsItsOwnCertificate(t *testing.T) {
	k8s, store := start(t)
	ctx := context.Background()
	if err := store.Update("config-network", map[string]string{"autocreate-cluster-domain-claims": "true"}); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"shop", config.SystemNamespace} {
		mustCreate(t, k8s, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	knativeService(t, k8s, "shop", "web")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "shop-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: []byte("chain v1"), corev1.TLSPrivateKeyKey: []byte("key v1"), "ca.crt": []byte("not copied")}}
	mustCreate(t, k8s, secret)

	const domain = "shop.example.org"
	dm := mapping("shop", domain, "serving.knative.dev/v1", "Service", "web")
	dm.Spec.TLS = &servingv1beta1.SecretTLS{SecretName: "shop-tls"}
	mustCreate(t, k8s, dm)
	ready(t, k8s, "shop", domain)
	condition(t, k8s, "shop", domain, servingv1beta1.DomainMappingConditionCertificateProvisioned, corev1.ConditionTrue, servingv1beta1.ReasonCertificateExternallyProvided)
	if got := get(t, k8s, "shop", domain).Status.URL; got != "https://shop.example.org:8443" {
		t.Errorf("url %q, want https://shop.example.org:8443", got)
	}
	copyKey := types.NamespacedName{Namespace: config.SystemNamespace, Name: certificates.SecretName("domainmapping", "shop", domain)}
	copied := &corev1.Secret{}
	if err := k8s.Get(ctx, copyKey, copied); err != nil {
		t.Fatal(err)
	}
	if copied.Labels[netv1alpha1.CertificateNamespaceLabel] != "shop" || copied.Labels[netv1alpha1.CertificateLabel] == "" ||
		string(copied.Data[corev1.TLSCertKey]) != "chain v1" || len(copied.Data) != 2 || copied.Type != corev1.SecretTypeTLS {
		t.Errorf("copy: labels %v, type %s, data keys %d, want the namespace's certificate with tls.crt and tls.key only", copied.Labels, copied.Type, len(copied.Data))
	}

	// A renewal reaches the copy at the next reconcile; an edit of the
	// mapping brings that about at once.
	secret.Data[corev1.TLSCertKey] = []byte("chain v2")
	if err := k8s.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	touch(t, k8s, "shop", domain)
	eventually(t, "the renewed certificate copied", func(ctx context.Context) (bool, string) {
		err := k8s.Get(ctx, copyKey, copied)
		return err == nil && string(copied.Data[corev1.TLSCertKey]) == "chain v2", fmt.Sprint(err)
	})

	missing := mapping("shop", "www.example.org", "serving.knative.dev/v1", "Service", "web")
	missing.Spec.TLS = &servingv1beta1.SecretTLS{SecretName: "nope"}
	mustCreate(t, k8s, missing)
	condition(t, k8s, "shop", "www.example.org", servingv1beta1.DomainMappingConditionCertificateProvisioned, corev1.ConditionFalse, "SecretNotFound")
	if got := get(t, k8s, "shop", "www.example.org"); !got.Status.IsReady() || got.Status.URL != "http://www.example.org:8080" {
		t.Errorf("a mapping whose certificate is missing: ready %v, url %q; want served over HTTP", got.Status.IsReady(), got.Status.URL)
	}

	if err := k8s.Delete(ctx, get(t, k8s, "shop", domain)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the copy deleted with the mapping", func(ctx context.Context) (bool, string) {
		err := k8s.Get(ctx, copyKey, &corev1.Secret{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// touch changes an annotation of a DomainMapping, which wakes its
// reconciler.
func touch(t *testing.T, k8s client.Client, ns, name string) {
	t.Helper()
	dm := get(t, k8s, ns, name)
	patch := client.MergeFrom(dm.DeepCopy())
	metav1.SetMetaDataAnnotation(&dm.ObjectMeta, "test.knit.dev/touched", dm.ResourceVersion)
	if err := k8s.Patch(context.Background(), dm, patch); err != nil {
		t.Fatal(err)
	}
}
