// Package reconciletest holds what the reconcilers' table tests all check
// the same way: an error against the substring a case expects, and the
// Kubernetes Events a fake recorder took.
package reconciletest

import (
	"strings"

	"k8s.io/client-go/tools/events"
)

// ErrMatches reports whether err is what a case wants: no error when want
// is empty, else an error whose text contains want.
func ErrMatches(err error, want string) bool {
	if want == "" {
		return err == nil
	}
	return err != nil && strings.Contains(err.Error(), want)
}

// Events closes rec and returns the events it recorded, in order.
func Events(rec *events.FakeRecorder) []string {
	close(rec.Events)
	var got []string
	for e := range rec.Events {
		got = append(got, e)
	}
	return got
}
