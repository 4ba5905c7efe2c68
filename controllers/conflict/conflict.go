// Package conflict makes an optimistic-concurrency conflict what it is: a
// reason to read again, not an error. Reconcilers write from the cache,
// and the cache trails the API server by a few milliseconds, so an update
// of an object another controller just wrote fails with 409 Conflict many
// times a minute on a busy revision. Returned as errors, those fill the
// log with "Reconciler error"; wrapped here they are read again shortly
// (the watch event of the newer version usually enqueues them first) and
// logged at debug level only.
package conflict

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Retry is how soon a reconcile that hit a conflict runs again: long
// enough for the cache to catch up, short enough not to be noticed.
const Retry = 100 * time.Millisecond

// Requeue wraps r so that a conflict it returns (wrapped or not) becomes a
// requeue after Retry instead of an error.
func Requeue(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
		res, err := r.Reconcile(ctx, req)
		if err != nil && apierrors.IsConflict(err) {
			log.FromContext(ctx).V(1).Info("Conflict; reading again", "err", err.Error())
			return ctrl.Result{RequeueAfter: Retry}, nil
		}
		return res, err
	})
}
