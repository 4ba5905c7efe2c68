package announce

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/conflict"
	"github.com/knitops/knit/gitsync/plan"
)

// fromGit passes objects knit applied from a repository.
var fromGit = predicate.NewPredicateFuncs(func(obj client.Object) bool {
	return obj.GetLabels()[plan.RepositoryLabel] != ""
})

// SetupWithManager registers the three watchers: EventSinks, and the
// Revisions and Routes deployed from Git.
func (a *Announcer) SetupWithManager(mgr ctrl.Manager) error {
	if err := ctrl.NewControllerManagedBy(mgr).Named("announce-eventsinks").
		For(&knitv1alpha1.EventSink{}).Complete(conflict.Requeue(&sinksReconciler{a: a})); err != nil {
		return err
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("announce-revisions").
		For(&servingv1.Revision{}, builder.WithPredicates(fromGit)).Complete(&revisionReconciler{a: a}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("announce-routes").
		For(&servingv1.Route{}, builder.WithPredicates(fromGit)).Complete(&routeReconciler{a: a})
}
