package configuration

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/conflict"
)

// Reconciler stamps Revisions and tracks their readiness.
type Reconciler struct {
	client client.Client
}

// SetupWithManager registers the reconciler; Revision status changes
// requeue their Configuration.
func SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&servingv1.Configuration{}).
		Owns(&servingv1.Revision{}).
		Complete(conflict.Requeue(&Reconciler{client: mgr.GetClient()}))
}
