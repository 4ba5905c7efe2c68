package domainmapping

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1beta1 "github.com/knitops/knit/api/serving/v1beta1"
	"github.com/knitops/knit/config"
)

// Finalizer holds a DomainMapping until the claim knit made for it is
// gone, Knative's name for it: a deleted mapping must free its domain
// for the next namespace to ask.
const Finalizer = "domainmappings.serving.knative.dev"

// Reconcile claims the domain, resolves the reference and writes status;
// the ingress follows the status (DomainMapping.Served).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	dm := &servingv1beta1.DomainMapping{}
	if err := r.client.Get(ctx, req.NamespacedName, dm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cfg := r.config.Load()
	if dm.DeletionTimestamp != nil {
		return ctrl.Result{}, r.finalize(ctx, dm, cfg.Network)
	}
	if !controllerutil.ContainsFinalizer(dm, Finalizer) {
		patch := client.MergeFrom(dm.DeepCopy())
		controllerutil.AddFinalizer(dm, Finalizer)
		if err := r.client.Patch(ctx, dm, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer to DomainMapping %s: %w", req.NamespacedName, err)
		}
	}
	before := dm.Status.DeepCopy()
	dm.Status.InitializeConditions()
	url := r.url(dm.Name)
	dm.Status.URL, dm.Status.Address = url, &duckv1.Addressable{URL: url}

	claimed, err := r.claim(ctx, dm, cfg.Network)
	if err != nil {
		return ctrl.Result{}, err
	}
	resolved, err := r.resolve(ctx, dm)
	if err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case claimed && resolved:
		dm.Status.MarkIngressReady()
	case !claimed:
		dm.Status.MarkIngressNotConfigured("DomainNotClaimed", "the ingress serves the domain once this namespace holds it")
	default:
		dm.Status.MarkIngressNotConfigured("ReferenceNotResolved", "the ingress serves the domain once spec.ref resolves")
	}
	recheck, err := r.certificate(ctx, dm, claimed, before, cfg.Network)
	if err != nil {
		return ctrl.Result{}, err
	}
	if dm.Spec.TLS != nil && (recheck == 0 || recheck > followSecret) {
		recheck = followSecret
	}
	dm.Status.ObservedGeneration = dm.Generation
	if !equality.Semantic.DeepEqual(before, &dm.Status) {
		if err := r.client.Status().Update(ctx, dm); err != nil {
			return ctrl.Result{}, fmt.Errorf("update status of DomainMapping %s: %w", req.NamespacedName, err)
		}
		readyEvents.Record(r.events, dm, &before.Status, &dm.Status.Status)
	}
	return ctrl.Result{RequeueAfter: recheck}, nil
}

// url is where the domain answers over plain HTTP: knit dev's ingress
// port shows, as in Routes' URLs.
func (r *Reconciler) url(host string) string {
	if r.urlPort == 0 || r.urlPort == 80 {
		return "http://" + host
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(r.urlPort))
}

// finalize deletes dm's certificate and the claim knit made for it, if
// this namespace holds it and config-network lets knit make claims (an
// operator's claims are the operator's to delete), then lets dm go.
func (r *Reconciler) finalize(ctx context.Context, dm *servingv1beta1.DomainMapping, n *config.Network) error {
	if !controllerutil.ContainsFinalizer(dm, Finalizer) {
		return nil
	}
	if err := r.release(ctx, dm); err != nil {
		return err
	}
	if n.AutocreateClusterDomainClaims {
		if err := r.releaseClaim(ctx, dm); err != nil {
			return err
		}
	}
	patch := client.MergeFrom(dm.DeepCopy())
	controllerutil.RemoveFinalizer(dm, Finalizer)
	if err := r.client.Patch(ctx, dm, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer of DomainMapping %s/%s: %w", dm.Namespace, dm.Name, err)
	}
	return nil
}
