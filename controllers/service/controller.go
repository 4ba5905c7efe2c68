package service

import (
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/conflict"
)

// Reconciler keeps a Service's Configuration and Route in step with it.
type Reconciler struct {
	client client.Client
	// events records the Service turning Ready or failing (readyEvents).
	events events.EventRecorder
}

// SetupWithManager registers the reconciler; changes to the owned
// Configuration and Route requeue the Service so status follows them.
func SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&servingv1.Service{}).
		Owns(&servingv1.Configuration{}).
		Owns(&servingv1.Route{}).
		Complete(conflict.Requeue(&Reconciler{client: mgr.GetClient(), events: mgr.GetEventRecorder("knit-service")}))
}
