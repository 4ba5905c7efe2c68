package runtime

import (
	"context"
	"log/slog"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlbuilder "sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/conflict"
	"github.com/knitops/knit/internal/endpointslices"
)

// ManagedBy is the endpointslice.kubernetes.io/managed-by value of the
// EndpointSlices the runtime publishes, so they are told apart from any
// other controller's.
const ManagedBy = "knit-local-runtime"

// fieldOwner names the runtime's writes in managedFields.
const fieldOwner = client.FieldOwner("knit-local-runtime")

// shutdownSlack is how long past the longest grace period the manager's
// stop waits for replicas.
const shutdownSlack = 5 * time.Second

// SetupWithManager registers the runtime's three controllers — revision
// Deployments into processes, Services into EndpointSlices, replicas into
// Pods — and its claim binder (knit dev's provisioner and PV controller,
// package claims: setupClaims), and stops every replica when the manager
// stops. It is the runtime's one entry point: whoever runs the runtime gets
// all of it.
func (rt *Runtime) SetupWithManager(mgr ctrl.Manager) error {
	rt.log = mgr.GetLogger().WithName("local-runtime")
	// Before anything starts: what a killed knit dev left behind.
	orphans, err := reapOrphans(rt.instance)
	if err != nil {
		rt.log.Error(err, "Could not look for processes an earlier knit dev left behind")
	}
	for _, o := range orphans {
		// A warning, shown without -v: it means the last knit dev on this
		// state directory did not stop cleanly.
		slog.Warn("Killed a process an earlier knit dev's replica left running", "pid", o.pid, "processGroup", o.pgid, "command", o.command)
	}
	rt.openCgroups() // after the orphans: it removes what is left of their cgroups
	// Their volumes too: Secrets and tokens on disk for replicas long gone.
	if err := os.RemoveAll(rt.opts.volumesDir()); err != nil {
		rt.log.Error(err, "Could not remove the volumes an earlier knit dev's replicas left behind")
	}
	rt.client, rt.reader = mgr.GetClient(), mgr.GetAPIReader()
	if err := endpointslices.Index(context.Background(), mgr.GetCache()); err != nil {
		return err
	}
	// Every slice write would log the API's "FQDN endpoints are deprecated"
	// warning; the runtime uses FQDN knowingly (see EndpointAddressType).
	quiet := rest.CopyConfig(mgr.GetConfig())
	quiet.WarningHandlerWithContext = rest.NoWarnings{}
	if rt.sliceWriter, err = client.New(quiet, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()}); err != nil {
		return err
	}

	err = ctrl.NewControllerManagedBy(mgr).
		Named("local-runtime-deployments").
		For(&appsv1.Deployment{}, ctrlbuilder.WithPredicates(managedDeployments)).
		WatchesRawSource(rt.queues.source(&rt.queues.deployments)).
		Complete(conflict.Requeue(&deploymentReconciler{rt: rt}))
	if err != nil {
		return err
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("local-runtime-endpointslices").
		For(&corev1.Service{}).
		Owns(&discoveryv1.EndpointSlice{}, ctrlbuilder.WithPredicates(predicate.NewPredicateFuncs(ownSlice))).
		WatchesRawSource(rt.queues.source(&rt.queues.endpointsFor)).
		Complete(conflict.Requeue(&endpointSliceReconciler{rt: rt}))
	if err != nil {
		return err
	}
	if err := rt.setupPods(mgr); err != nil {
		return err
	}
	if err := rt.setupClaims(mgr); err != nil {
		return err
	}
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		stopCtx, cancel := context.WithTimeout(context.Background(), rt.opts.ShutdownGracePeriod+shutdownSlack)
		defer cancel()
		err := rt.Shutdown(stopCtx)
		if cgErr := rt.cgroups.tree.Close(); cgErr != nil {
			rt.log.Error(cgErr, "Runtime cgroup not removed")
		}
		return err
	}))
}

// managed reports whether a Deployment runs a revision: the runtime's
// business. Other Deployments are left alone.
func managed(obj client.Object) bool {
	return obj.GetLabels()[servingv1.RevisionLabelKey] != ""
}

// managedDeployments passes events of revision Deployments, including the
// update that removes the label (so their replicas stop).
var managedDeployments = predicate.Funcs{
	CreateFunc:  func(e event.CreateEvent) bool { return managed(e.Object) },
	DeleteFunc:  func(e event.DeleteEvent) bool { return managed(e.Object) },
	UpdateFunc:  func(e event.UpdateEvent) bool { return managed(e.ObjectOld) || managed(e.ObjectNew) },
	GenericFunc: func(e event.GenericEvent) bool { return managed(e.Object) },
}

func ownSlice(obj client.Object) bool {
	return obj.GetLabels()[discoveryv1.LabelManagedBy] == ManagedBy
}
