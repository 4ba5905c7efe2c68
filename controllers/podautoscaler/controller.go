package podautoscaler

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/conflict"
)

// Reconciler applies recommendations to Deployments and SKSs.
type Reconciler struct {
	client      client.Client
	recommender Recommender
	hinter      ScaleHinter
}

// ScaleHinter hears of a scale-up just before the Deployment's write is
// sent. knit dev's local runtime, in the same process, starts replicas on
// it rather than when the write has come back through its watch; on a
// cluster there is none.
type ScaleHinter interface {
	HintScale(dep *appsv1.Deployment, replicas int32)
}

// SetupWithManager registers the reconciler. A Deployment's status change
// (replicas becoming ready) requeues the PodAutoscaler of its Revision,
// which has the Revision's name; wakes, when given, carry the autoscaler's
// "decide now" (each tick, a request at zero). hinter may be nil.
func SetupWithManager(mgr ctrl.Manager, rec Recommender, wakes <-chan event.GenericEvent, hinter ScaleHinter) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(&autoscalingv1alpha1.PodAutoscaler{}).
		Owns(&networkingv1alpha1.ServerlessService{}).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(paForDeployment))
	if wakes != nil {
		b = b.WatchesRawSource(source.Channel(wakes, &handler.EnqueueRequestForObject{}))
	}
	return b.Complete(conflict.Requeue(&Reconciler{client: mgr.GetClient(), recommender: rec, hinter: hinter}))
}

func paForDeployment(_ context.Context, obj client.Object) []reconcile.Request {
	rev := obj.GetLabels()[servingv1.RevisionLabelKey]
	if rev == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: rev}}}
}
