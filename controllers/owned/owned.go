// Package owned keeps a parent's child objects in their desired shape:
// create when missing, update when drifted, and refuse to adopt an object
// someone else controls. Every reconciler that owns children uses it, so
// that rule is written once, and so is how a child that cannot be written
// shows on its parent (Failure).
package owned

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NotOwnedError says a child's name is taken by an object the parent does
// not control; the reconciler turns it into a NotOwned condition.
type NotOwnedError struct {
	Kind, Name string
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("there is an existing %s %q that we do not own", e.Kind, e.Name)
}

// Ensure makes the child named like desired match it. existing is an empty
// object of the same type to read into. differs reports whether existing
// needs an update; update copies the managed fields of desired onto
// existing. It returns the object as stored. A create or update the API
// server refuses comes back as a *WriteError.
func Ensure[T client.Object](ctx context.Context, c client.Client, owner metav1.Object, kind string, desired, existing T,
	differs func(existing, desired T) bool, update func(existing, desired T)) (T, error) {
	err := c.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, desired); err != nil {
			return desired, &WriteError{Verb: "create", Kind: kind, Name: desired.GetName(), Err: err}
		}
		return desired, nil
	case err != nil:
		return existing, fmt.Errorf("get %s %s: %w", kind, desired.GetName(), err)
	}
	if !metav1.IsControlledBy(existing, owner) {
		return existing, &NotOwnedError{Kind: kind, Name: existing.GetName()}
	}
	if !differs(existing, desired) {
		return existing, nil
	}
	update(existing, desired)
	if err := c.Update(ctx, existing); err != nil {
		return existing, &WriteError{Verb: "update", Kind: kind, Name: existing.GetName(), Err: err}
	}
	return existing, nil
}
