// Package transition records Kubernetes Events when a condition a user
// cares about changes: a Revision turning Ready or failing, a Route or a
// Service failing, a sync failing. It compares the condition before and
// after a reconcile and records a move to True or to False once, as the
// condition's lastTransitionTime counts them, so a resync never repeats
// an Event and `kubectl describe` shows what happened and when.
package transition
