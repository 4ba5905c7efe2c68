package reconciletest

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/events"
)

func TestErrMatches(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
		ok   bool
	}{
		{nil, "", true},
		{errors.New("boom"), "", false},
		{nil, "boom", false},
		{errors.New("create x: boom"), "boom", true},
		{errors.New("create x: bang"), "boom", false},
	} {
		if got := ErrMatches(tc.err, tc.want); got != tc.ok {
			t.Errorf("ErrMatches(%v, %q) = %v, want %v", tc.err, tc.want, got, tc.ok)
		}
	}
}

func TestEvents(t *testing.T) {
	rec := events.NewFakeRecorder(3)
	rec.Eventf(nil, nil, "Normal", "Ready", "", "one")
	rec.Eventf(nil, nil, "Warning", "Failed", "", "two")
	if diff := cmp.Diff([]string{"Normal Ready one", "Warning Failed two"}, Events(rec)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
