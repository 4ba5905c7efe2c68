package transition

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"

	duckv1 "github.com/knitops/knit/api/duck/v1"

	"github.com/knitops/knit/internal/reconciletest"
)

var revisionReady = Events{Condition: duckv1.ConditionReady, Action: "Deploy", True: "RevisionReady", TrueNote: "ready", False: "RevisionFailed"}

func ready(status corev1.ConditionStatus, reason, message string) *duckv1.Status {
	s := &duckv1.Status{}
	if status != "" {
		s.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: status, Reason: reason, Message: message}}
	}
	return s
}

func TestFor(t *testing.T) {
	tests := []struct {
		name          string
		events        Events
		before, after *duckv1.Status
		want          *Event
	}{
		{"a new resource turns ready", revisionReady, ready("", "", ""), ready(corev1.ConditionTrue, "", ""),
			&Event{corev1.EventTypeNormal, "RevisionReady", "ready"}},
		{"ready after deploying", revisionReady, ready(corev1.ConditionUnknown, "Deploying", "waiting"), ready(corev1.ConditionTrue, "", ""),
			&Event{corev1.EventTypeNormal, "RevisionReady", "ready"}},
		{"recovered from a failure", revisionReady, ready(corev1.ConditionFalse, "CrashLoopBackOff", "back-off"), ready(corev1.ConditionTrue, "", ""),
			&Event{corev1.EventTypeNormal, "RevisionReady", "ready"}},
		{"still ready: a resync records nothing", revisionReady, ready(corev1.ConditionTrue, "", ""), ready(corev1.ConditionTrue, "", ""), nil},
		{"fails", revisionReady, ready(corev1.ConditionUnknown, "Deploying", "waiting"), ready(corev1.ConditionFalse, "CrashLoopBackOff", "back-off"),
			&Event{corev1.EventTypeWarning, "RevisionFailed", "CrashLoopBackOff: back-off"}},
		{"fails with no message", revisionReady, ready(corev1.ConditionTrue, "", ""), ready(corev1.ConditionFalse, "ExitCode1", ""),
			&Event{corev1.EventTypeWarning, "RevisionFailed", "ExitCode1"}},
		{"still failed, for another reason", revisionReady, ready(corev1.ConditionFalse, "FailedCreate", "full"), ready(corev1.ConditionFalse, "CrashLoopBackOff", "back-off"), nil},
		{"unknown again", revisionReady, ready(corev1.ConditionTrue, "", ""), ready(corev1.ConditionUnknown, "Deploying", "waiting"), nil},
		{"no Event asked for True", Events{Condition: duckv1.ConditionReady, False: "SyncFailed"}, ready("", "", ""), ready(corev1.ConditionTrue, "", ""), nil},
		{"another condition moved", Events{Condition: "Synced", True: "Synced", False: "SyncFailed"}, ready("", "", ""), ready(corev1.ConditionFalse, "X", "y"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, ok := tc.events.For(tc.before, tc.after)
			var got *Event
			if ok {
				got = &ev
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("For (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecord(t *testing.T) {
	rec := events.NewFakeRecorder(4)
	revisionReady.Record(rec, nil, ready("", "", ""), ready(corev1.ConditionFalse, "ExitCode1", "50% done"))
	revisionReady.Record(rec, nil, ready(corev1.ConditionFalse, "ExitCode1", "50% done"), ready(corev1.ConditionFalse, "ExitCode1", "50% done"))
	revisionReady.Record(nil, nil, ready("", "", ""), ready(corev1.ConditionTrue, "", ""))
	got := reconciletest.Events(rec)
	// A message is the note as it is, never a format.
	if diff := cmp.Diff([]string{"Warning RevisionFailed ExitCode1: 50% done"}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestTruncate(t *testing.T) {
	for _, n := range []int{0, MaxNote, MaxNote + 1, 3 * MaxNote} {
		note := strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
		got := truncate(note)
		if len(got) > MaxNote || !utf8.ValidString(got) {
			t.Errorf("truncate(%d bytes) = %d bytes, valid UTF-8 %v; want at most %d", len(note), len(got), utf8.ValidString(got), MaxNote)
		}
		if len(note) <= MaxNote && got != note {
			t.Errorf("truncate(%d bytes) changed a note that fits", len(note))
		}
	}
}
