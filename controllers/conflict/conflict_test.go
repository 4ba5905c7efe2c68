package conflict

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestRequeue(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "serving.knative.dev", Resource: "routes"}, "hello", errors.New("the object has been modified"))
	other := errors.New("get scale target: connection refused")
	tests := []struct {
		name    string
		res     ctrl.Result
		err     error
		wantRes ctrl.Result
		wantErr error
	}{
		{"success passes through", ctrl.Result{RequeueAfter: time.Second}, nil, ctrl.Result{RequeueAfter: time.Second}, nil},
		{"a conflict requeues without an error", ctrl.Result{}, conflict, ctrl.Result{RequeueAfter: Retry}, nil},
		{"a wrapped conflict too", ctrl.Result{}, fmt.Errorf("update status of Route default/hello: %w", conflict), ctrl.Result{RequeueAfter: Retry}, nil},
		{"other errors stay errors", ctrl.Result{}, other, ctrl.Result{}, other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := reconcile.Func(func(context.Context, ctrl.Request) (ctrl.Result, error) { return tt.res, tt.err })
			res, err := Requeue(inner).Reconcile(t.Context(), ctrl.Request{})
			if res != tt.wantRes || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("Reconcile = %+v, %v; want %+v, %v", res, err, tt.wantRes, tt.wantErr)
			}
		})
	}
}
