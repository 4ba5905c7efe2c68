package domainmapping

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1beta1 "github.com/knitops/knit/api/serving/v1beta1"
	"github.com/knitops/knit/config"
)

// claim marks DomainClaimed and says whether dm's namespace holds the
// domain: a ClusterDomainClaim naming it, made here when config-network
// allows and no namespace holds the domain yet. The claim's name is the
// domain, so the API server refuses a second one: of two namespaces
// racing for a domain exactly one creates its claim.
func (r *Reconciler) claim(ctx context.Context, dm *servingv1beta1.DomainMapping, n *config.Network) (bool, error) {
	dc := &netv1alpha1.ClusterDomainClaim{}
	err := r.client.Get(ctx, types.NamespacedName{Name: dm.Name}, dc)
	if apierrors.IsNotFound(err) {
		if !n.AutocreateClusterDomainClaims {
			dm.Status.MarkDomainClaimFailed(fmt.Sprintf("no ClusterDomainClaim found for domain %q (and autocreate-cluster-domain-claims property is not true)", dm.Name))
			return false, nil
		}
		dc = &netv1alpha1.ClusterDomainClaim{ObjectMeta: metav1.ObjectMeta{Name: dm.Name}, Spec: netv1alpha1.ClusterDomainClaimSpec{Namespace: dm.Namespace}}
		err = r.client.Create(ctx, dc)
		if apierrors.IsAlreadyExists(err) {
			// Another namespace's mapping won the race; its claim wakes
			// this one, which then reads who holds the domain.
			return false, fmt.Errorf("claim domain %q: another claim appeared meanwhile", dm.Name)
		}
	}
	if err != nil {
		return false, fmt.Errorf("claim domain %q: %w", dm.Name, err)
	}
	if dc.Spec.Namespace != dm.Namespace {
		dm.Status.MarkDomainClaimNotOwned(dc.Spec.Namespace)
		return false, nil
	}
	dm.Status.MarkDomainClaimed()
	return true, nil
}

// releaseClaim deletes the domain's claim if dm's namespace holds it.
// The delete is preconditioned on the claim read, so a claim another
// namespace took meanwhile is never deleted.
func (r *Reconciler) releaseClaim(ctx context.Context, dm *servingv1beta1.DomainMapping) error {
	dc := &netv1alpha1.ClusterDomainClaim{}
	if err := r.client.Get(ctx, types.NamespacedName{Name: dm.Name}, dc); err != nil {
		return client.IgnoreNotFound(err)
	}
	if dc.Spec.Namespace != dm.Namespace {
		return nil
	}
	err := r.client.Delete(ctx, dc, client.Preconditions{UID: &dc.UID, ResourceVersion: &dc.ResourceVersion})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("release the claim on domain %q: %w", dm.Name, err)
	}
	return nil
}
