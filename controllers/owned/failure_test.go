package owned

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestFailure(t *testing.T) {
	svc := schema.GroupResource{Resource: "services"}
	full := apierrors.NewInternalError(errors.New(`failed to allocate a serviceIP for Service "hello-private": range is full`))
	type result struct {
		Reason, Message string
		OK              bool
	}
	tests := []struct {
		name string
		err  error
		want result
	}{
		{"none", nil, result{}},
		{"a name taken by another owner", &NotOwnedError{Kind: "Service", Name: "hello"},
			result{"NotOwned", `there is an existing Service "hello" that we do not own`, true}},
		{"the API server refuses to create, wrapped further up", fmt.Errorf("reconcile: %w", &WriteError{Verb: "create", Kind: "Service", Name: "hello-private", Err: full}),
			result{"FailedCreate", `cannot create Service "hello-private": Internal error occurred: failed to allocate a serviceIP for Service "hello-private": range is full`, true}},
		{"an update refused as invalid", &WriteError{Verb: "update", Kind: "Deployment", Name: "d", Err: apierrors.NewInvalid(schema.GroupKind{Kind: "Deployment"}, "d", nil)},
			result{"FailedUpdate", `cannot update Deployment "d": Deployment "d" is invalid`, true}},
		{"a conflict only asks for a retry", &WriteError{Verb: "update", Kind: "Service", Name: "s", Err: apierrors.NewConflict(svc, "s", errors.New("changed"))}, result{}},
		{"already exists: the cache was behind", &WriteError{Verb: "create", Kind: "Service", Name: "s", Err: apierrors.NewAlreadyExists(svc, "s")}, result{}},
		{"a busy API server", &WriteError{Verb: "create", Kind: "Service", Name: "s", Err: apierrors.NewTooManyRequests("slow down", 1)}, result{}},
		{"not about writing a child", errors.New("list EndpointSlices: boom"), result{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reason, message, ok := Failure(tc.err)
			if diff := cmp.Diff(tc.want, result{reason, message, ok}); diff != "" {
				t.Errorf("Failure (-want +got):\n%s", diff)
			}
		})
	}
}
