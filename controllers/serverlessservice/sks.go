package serverlessservice

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	"github.com/knitops/knit/controllers/owned"
	"github.com/knitops/knit/controllers/serverlessservice/resources"
	"github.com/knitops/knit/internal/endpointslices"
)

// Reconcile ensures the private and public Services, then points the
// public endpoints at the replicas or the activators per the mode.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	sks := &networkingv1alpha1.ServerlessService{}
	if err := r.client.Get(ctx, req.NamespacedName, sks); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if sks.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	before := sks.Status.DeepCopy()
	sks.Status.InitializeConditions()

	for _, svc := range []*corev1.Service{resources.MakePrivateService(sks), resources.MakePublicService(sks)} {
		if err := r.ensureService(ctx, sks, svc); err != nil {
			return ctrl.Result{}, r.childFailed(ctx, sks, before, err)
		}
	}
	sks.Status.PrivateServiceName = resources.PrivateServiceName(sks)
	sks.Status.ServiceName = resources.PublicServiceName(sks)

	private, err := r.slices(ctx, sks.Namespace, resources.PrivateServiceName(sks))
	if err != nil {
		return ctrl.Result{}, err
	}
	activators, err := r.slices(ctx, r.activator.Namespace, r.activator.Service)
	if err != nil {
		return ctrl.Result{}, err
	}
	public, fromReplicas := resources.PublicEndpoints(sks, private, activators)
	if err := r.syncPublic(ctx, sks, public); err != nil {
		return ctrl.Result{}, err
	}
	markEndpoints(sks, public, fromReplicas, resources.ReadyCount(activators))
	return ctrl.Result{}, r.updateStatus(ctx, sks, before)
}

// childFailed shows a Service that cannot be created or updated on the
// SKS (Ready False with the API server's words, e.g. an exhausted service
// range), so the Revision and its Service show it too instead of staying
// Ready while nothing can reach the replicas. A name taken by another
// owner waits for the user; any other failure is retried.
func (r *Reconciler) childFailed(ctx context.Context, sks *networkingv1alpha1.ServerlessService, before *networkingv1alpha1.ServerlessServiceStatus, err error) error {
	reason, message, ok := owned.Failure(err)
	if !ok {
		return err
	}
	sks.Status.MarkEndpointsFailed(reason, message)
	if statusErr := r.updateStatus(ctx, sks, before); statusErr != nil {
		return errors.Join(err, statusErr)
	}
	var notOwned *owned.NotOwnedError
	if errors.As(err, &notOwned) {
		return nil
	}
	return err
}

func (r *Reconciler) updateStatus(ctx context.Context, sks *networkingv1alpha1.ServerlessService, before *networkingv1alpha1.ServerlessServiceStatus) error {
	sks.Status.ObservedGeneration = sks.Generation
	if equality.Semantic.DeepEqual(before, &sks.Status) {
		return nil
	}
	if err := r.client.Status().Update(ctx, sks); err != nil {
		return fmt.Errorf("update status of ServerlessService %s/%s: %w", sks.Namespace, sks.Name, err)
	}
	return nil
}

// ensureService keeps a Service's ports and selector, and the labels the
// SKS gives it (others' labels stay): a Service made before the SKS
// labelled its Services gets them, and its slices with them.
func (r *Reconciler) ensureService(ctx context.Context, sks *networkingv1alpha1.ServerlessService, want *corev1.Service) error {
	_, err := owned.Ensure(ctx, r.client, sks, "Service", want, &corev1.Service{},
		serviceDiffers,
		func(have, want *corev1.Service) {
			have.Spec.Ports, have.Spec.Selector = want.Spec.Ports, want.Spec.Selector
			if have.Labels == nil {
				have.Labels = map[string]string{}
			}
			maps.Copy(have.Labels, want.Labels)
		})
	return err
}

// serviceDiffers says whether the Service the API holds (have, with its
// defaults filled in) lacks what the SKS wants of it. A port the SKS
// leaves without a protocol is TCP, as the API server defaults it: read
// as a difference, every reconcile would write the Service again.
func serviceDiffers(have, want *corev1.Service) bool {
	ports := slices.Clone(want.Spec.Ports)
	for i := range ports {
		if ports[i].Protocol == "" {
			ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	return !equality.Semantic.DeepEqual(have.Spec.Ports, ports) || !equality.Semantic.DeepEqual(have.Spec.Selector, want.Spec.Selector) ||
		!hasLabels(have.Labels, want.Labels)
}

// hasLabels says whether have holds every label of want.
func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// slices are the Service's EndpointSlices that endpointslices.Check
// trusts, deep copies: parts of them go into the public slices written to
// the API, which decodes its answer into them, and the public ones are
// deleted through it. An untrusted private slice mirrored into a public
// one would carry the SKS's own managed-by, and the ingress would trust it.
func (r *Reconciler) slices(ctx context.Context, ns, service string) ([]discoveryv1.EndpointSlice, error) {
	items, err := endpointslices.List(ctx, r.client, types.NamespacedName{Namespace: ns, Name: service})
	if err != nil {
		return nil, err
	}
	return endpointslices.Trusted(ctx, items), nil
}

// syncPublic makes the public Service's SKS-managed slices exactly want.
func (r *Reconciler) syncPublic(ctx context.Context, sks *networkingv1alpha1.ServerlessService, want []discoveryv1.EndpointSlice) error {
	have, err := r.slices(ctx, sks.Namespace, resources.PublicServiceName(sks))
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for i := range want {
		keep[want[i].Name] = true
		if err := r.ensureSlice(ctx, &want[i]); err != nil {
			return err
		}
	}
	for i := range have {
		s := &have[i]
		if keep[s.Name] || s.Labels[discoveryv1.LabelManagedBy] != resources.ManagedBy {
			continue
		}
		if err := client.IgnoreNotFound(r.client.Delete(ctx, s)); err != nil {
			return fmt.Errorf("delete EndpointSlice %s: %w", s.Name, err)
		}
	}
	return nil
}

func (r *Reconciler) ensureSlice(ctx context.Context, want *discoveryv1.EndpointSlice) error {
	have := &discoveryv1.EndpointSlice{}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(want), have)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.client.Create(ctx, want); err != nil {
			return fmt.Errorf("create EndpointSlice %s: %w", want.Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("get EndpointSlice %s: %w", want.Name, err)
	}
	if equality.Semantic.DeepEqual(have.Endpoints, want.Endpoints) && equality.Semantic.DeepEqual(have.Ports, want.Ports) {
		return nil
	}
	have.Endpoints, have.Ports = want.Endpoints, want.Ports
	if err := r.client.Update(ctx, have); err != nil {
		return fmt.Errorf("update EndpointSlice %s: %w", want.Name, err)
	}
	return nil
}

// markEndpoints: Ready when the public Service has endpoints; the
// activator condition is informational.
func markEndpoints(sks *networkingv1alpha1.ServerlessService, public []discoveryv1.EndpointSlice, fromReplicas bool, activators int) {
	if activators > 0 {
		sks.Status.MarkActivatorEndpointsPopulated()
	} else {
		sks.Status.MarkActivatorEndpointsRemoved()
	}
	n := resources.ReadyCount(public)
	switch {
	case n > 0 && fromReplicas:
		sks.Status.MarkEndpointsReady()
	case n > 0:
		sks.Status.MarkEndpointsFromActivators(fmt.Sprintf("%s mode: requests go through %d activator endpoint(s)", sks.Spec.Mode, n))
	default:
		sks.Status.MarkNoHealthyBackends()
	}
}
