package endpoints

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/knitops/knit/controllers/conflict"
	"github.com/knitops/knit/controllers/endpoints/resources"
	"github.com/knitops/knit/internal/endpointslices"
)

// Reconciler keeps the Endpoints of the Services knit's slices serve.
type Reconciler struct {
	// client reads Services and slices from the manager's cache.
	client client.Client
	// endpoints reads and writes Endpoints, uncached (see the package doc).
	endpoints client.Client
}

// SetupWithManager registers the Endpoints mirror, and a reconciler per
// alias. A Service's change or a change of a slice knit wrote wakes the
// Service; slices others write are theirs and wake nothing.
func SetupWithManager(mgr ctrl.Manager, aliases ...Alias) error {
	if err := endpointslices.Index(context.Background(), mgr.GetCache()); err != nil {
		return err
	}
	ep, err := endpointsClient(mgr)
	if err != nil {
		return err
	}
	r := &Reconciler{client: mgr.GetClient(), endpoints: ep}
	byKnit := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		s, ok := obj.(*discoveryv1.EndpointSlice)
		return ok && resources.ByKnit(s)
	})
	err = ctrl.NewControllerManagedBy(mgr).Named("endpoints").
		For(&corev1.Service{}).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(serviceOf), builder.WithPredicates(byKnit)).
		Complete(conflict.Requeue(r))
	if err != nil {
		return fmt.Errorf("endpoints controller: %w", err)
	}
	for _, a := range aliases {
		if err := a.setup(mgr); err != nil {
			return fmt.Errorf("alias %s/%s of %s: %w", a.Namespace, a.Name, a.Source, err)
		}
	}
	return nil
}

// serviceOf maps a slice to its Service, named by its
// kubernetes.io/service-name label.
func serviceOf(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[discoveryv1.LabelServiceName]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}

// endpointsClient is a client of the manager's API server whose warnings
// are logged once per process: the API server answers every request about
// core/v1 Endpoints with a deprecation warning, which the manager's
// client would log at each reconcile.
func endpointsClient(mgr ctrl.Manager) (client.Client, error) {
	cfg := rest.CopyConfig(mgr.GetConfig())
	cfg.WarningHandler = nil
	cfg.WarningHandlerWithContext = log.NewKubeAPIWarningLogger(log.KubeAPIWarningLoggerOptions{Deduplicate: true})
	c, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient()})
	if err != nil {
		return nil, fmt.Errorf("Endpoints client: %w", err)
	}
	return c, nil
}
