package owned

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// WriteError says the API server refused to create or update a child: an
// exhausted service range, a quota, an admission webhook, an object it
// finds invalid. Returned as a plain error it would only reach the log
// while the parent still looked healthy; Failure turns it into the
// parent's condition.
type WriteError struct {
	// Verb is "create" or "update".
	Verb string
	// Kind and Name are the child's.
	Kind, Name string
	// Err is the API server's answer.
	Err error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("cannot %s %s %q: %v", e.Verb, e.Kind, e.Name, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// Failure says how a parent shows err, an error from reconciling one of
// its children: the condition reason (NotOwned, or FailedCreate and
// FailedUpdate, as Kubernetes' own controllers name these events) and a
// message with the API server's words. ok is false for errors that are
// only a reason to try again (a conflict, a cache a moment behind, a busy
// API server) or not about writing a child at all: a parent does not turn
// False for those.
func Failure(err error) (reason, message string, ok bool) {
	var notOwned *NotOwnedError
	var write *WriteError
	switch {
	case errors.As(err, &notOwned):
		return ReasonNotOwned, notOwned.Error(), true
	case errors.As(err, &write) && !transient(write.Err):
		return failedReason(write.Verb), write.Error(), true
	}
	return "", "", false
}

// The reasons Failure gives, Kubernetes' own for these events, whatever
// the parent's kind: a parent's condition shows them as they are.
const (
	// ReasonNotOwned: the child's name is taken by another owner's object.
	ReasonNotOwned = "NotOwned"
	// ReasonFailedCreate and ReasonFailedUpdate: the API server refused
	// to create or update the child.
	ReasonFailedCreate = "FailedCreate"
	ReasonFailedUpdate = "FailedUpdate"
)

// transient errors clear on their own when the write is retried.
func transient(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err)
}

// failedReason names a refused write by its verb, "create" or "update".
func failedReason(verb string) string {
	if verb == "update" {
		return ReasonFailedUpdate
	}
	return ReasonFailedCreate
}
