package activator

import (
	"context"
	"net"
	"slices"
	"strconv"
	"sync"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/endpointslices"
	"github.com/knitops/knit/internal/names"
)

// The slices of the private Service over a Revision's replicas
// (names.PrivateService) carry the serving port under httpPortName.
const httpPortName = "http"

// The activators' own Service, whose ready endpoints are every activator
// replica: they split each Revision's replicas among them.
var activatorService = types.NamespacedName{Namespace: "knit-system", Name: "knit-activator"}

// SetupWithManager keeps every Revision's containerConcurrency, timeout
// and ready replicas from the manager's cache: Revisions, and the
// EndpointSlices of their private Services. It keeps this activator's
// place among the activators (Options.Self) from the EndpointSlices of
// the activator Service, rebalancing every Revision when it changes,
// each Service's slices found through the cache's index by Service. It
// also adds the activator to the manager, so Start runs with it. None
// needs the leader: every activator replica serves. Call it before
// serving requests.
func (a *Activator) SetupWithManager(mgr ctrl.Manager) error {
	// Informers made now join the cache's first sync, so a caller that
	// waits for it (knit activator) starts serving with every Revision known.
	for _, obj := range []client.Object{&servingv1.Revision{}, &discoveryv1.EndpointSlice{}} {
		if _, err := mgr.GetCache().GetInformer(context.Background(), obj, cache.BlockUntilSynced(false)); err != nil {
			return err
		}
	}
	if err := endpointslices.Index(context.Background(), mgr.GetCache()); err != nil {
		return err
	}
	r := &endpointsReconciler{client: mgr.GetClient(), a: a}
	a.resolve = func(ctx context.Context, key types.NamespacedName) error {
		_, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key})
		return err
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("activator").
		For(&servingv1.Revision{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(revisionOfSlice),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
				return len(revisionOfSlice(context.Background(), obj)) > 0
			}))).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
		Complete(r)
	if err != nil {
		return err
	}
	// The activator Service's slices are one key: each change re-reads
	// them all and, if this activator's place moved, rebalances every
	// Revision at once.
	err = ctrl.NewControllerManagedBy(mgr).
		Named("activator-peers").
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(activatorServiceOfSlice),
			builder.WithPredicates(predicate.NewPredicateFuncs(isActivatorSlice))).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
		Complete(&peersReconciler{client: mgr.GetClient(), a: a})
	if err != nil {
		return err
	}
	return mgr.Add(a)
}

func isActivatorSlice(obj client.Object) bool {
	return obj.GetNamespace() == activatorService.Namespace &&
		obj.GetLabels()[discoveryv1.LabelServiceName] == activatorService.Name
}

func activatorServiceOfSlice(_ context.Context, obj client.Object) []reconcile.Request {
	if !isActivatorSlice(obj) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: activatorService}}
}

// peersReconciler places this activator among the ready endpoints of the
// activator Service.
type peersReconciler struct {
	client client.Reader
	a      *Activator
}

func (r *peersReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	// Only read, into addresses: no copy of the cache's slices.
	items, err := endpointslices.List(ctx, r.client, activatorService, client.UnsafeDisableDeepCopy)
	if err != nil {
		return reconcile.Result{}, err
	}
	r.a.setPeers(peersOf(activatorAddresses(items, r.a.opts.Self), r.a.opts.Self))
	return reconcile.Result{}, nil
}

// revisionOfSlice maps a private Service's slice to its Revision through
// the labels it inherits from the Service: its ServerlessService, which
// is named for the Revision. The Service's own name may be shortened
// (names.PrivateService) and cannot be parsed back.
func revisionOfSlice(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	name := l[networkingv1alpha1.ServerlessServiceLabelKey]
	if name == "" || l[networkingv1alpha1.ServiceTypeLabelKey] != networkingv1alpha1.ServiceTypePrivate {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}

// endpointsReconciler copies a Revision and its private slices from the
// cache into the activator.
type endpointsReconciler struct {
	client client.Reader
	a      *Activator
	// mu orders reconciles, which the request path also runs for a
	// Revision it meets first: a later cache read is always applied last.
	mu sync.Mutex
}

func (r *endpointsReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rev := &servingv1.Revision{}
	if err := r.client.Get(ctx, req.NamespacedName, rev); err != nil {
		if apierrors.IsNotFound(err) {
			r.a.Forget(req.NamespacedName)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	// Only read, into addresses: no copy of the cache's slices.
	items, err := endpointslices.List(ctx, r.client, types.NamespacedName{Namespace: req.Namespace, Name: names.PrivateService(req.Name)},
		client.UnsafeDisableDeepCopy)
	if err != nil {
		return reconcile.Result{}, err
	}
	r.a.update(req.NamespacedName, configFor(rev, r.a.opts.MaxWait), endpointAddresses(endpointslices.Trusted(ctx, items)))
	return reconcile.Result{}, nil
}

// endpointAddresses are the Revision's replicas in the slices, as
// host:port on the port named http, sorted and without repeats: ready
// ones (ready unset counts as ready, as Kubernetes says) and the ones not
// ready yet, which the activator probes itself, as Knative's does, so a
// replica takes its first request as soon as its queue-proxy answers
// rather than after its readiness has gone through the API server.
// Terminating endpoints are neither. Any address type dials the same:
// knit dev publishes 127.0.0.1 as an FQDN.
func endpointAddresses(items []discoveryv1.EndpointSlice) endpointSet {
	var set endpointSet
	for _, s := range items {
		port := int32(0)
		for _, p := range s.Ports {
			if p.Name != nil && *p.Name == httpPortName && p.Port != nil {
				port = *p.Port
			}
		}
		if port == 0 {
			continue
		}
		for _, ep := range s.Endpoints {
			if len(ep.Addresses) == 0 || ptr.Deref(ep.Conditions.Terminating, false) {
				continue
			}
			addr := net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(port)))
			if ptr.Deref(ep.Conditions.Ready, true) {
				set.ready = append(set.ready, addr)
			} else {
				set.notReady = append(set.notReady, addr)
			}
		}
	}
	set.ready = slices.Compact(slices.Sorted(slices.Values(set.ready)))
	set.notReady = slices.DeleteFunc(slices.Compact(slices.Sorted(slices.Values(set.notReady))), func(addr string) bool {
		_, found := slices.BinarySearch(set.ready, addr)
		return found
	})
	return set
}

// endpointSet is a Revision's replicas as its slices list them.
type endpointSet struct {
	// ready are the endpoints Kubernetes says are ready; notReady the
	// others that are not terminating. Both sorted, disjoint.
	ready, notReady []string
}

// activatorAddresses are the addresses of the slices' ready endpoints,
// whatever their port, sorted and without repeats: every activator sees
// the same list, so each knows its place in it. A dual-stack Service has
// slices of each address type, each listing every activator: only those
// of the type self is listed in count (all when it is in none).
func activatorAddresses(items []discoveryv1.EndpointSlice, self string) []string {
	ready := func(ep discoveryv1.Endpoint) bool {
		return len(ep.Addresses) > 0 && (ep.Conditions.Ready == nil || *ep.Conditions.Ready)
	}
	var family discoveryv1.AddressType
	for _, s := range items {
		if slices.ContainsFunc(s.Endpoints, func(ep discoveryv1.Endpoint) bool { return ready(ep) && ep.Addresses[0] == self }) {
			family = s.AddressType
			break
		}
	}
	var out []string
	for _, s := range items {
		if family != "" && s.AddressType != family {
			continue
		}
		for _, ep := range s.Endpoints {
			if ready(ep) {
				out = append(out, ep.Addresses[0])
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
