package transition

import (
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

// Events says which Events one condition's transitions record, declared
// once per kind beside its reconciler.
type Events struct {
	// Condition is the condition watched.
	Condition duckv1.ConditionType
	// Action is the events.k8s.io action: what the controller was doing
	// ("Deploy", "Route", "Sync").
	Action string
	// True is the reason of the Normal Event recorded when the condition
	// turns True, TrueNote its note; "" records none.
	True, TrueNote string
	// False is the reason of the Warning Event recorded when the
	// condition turns False, noted with the condition's reason and
	// message; "" records none.
	False string
}

// Event is one Event to record.
type Event struct {
	Type, Reason, Note string
}

// For is the Event the move of e.Condition from before to after records:
// one when it turned True or False, none when it stayed as it was (its
// reason or message changing included) or turned Unknown.
func (e Events) For(before, after *duckv1.Status) (Event, bool) {
	was, now := before.GetCondition(e.Condition), after.GetCondition(e.Condition)
	switch {
	case now.IsTrue() && !was.IsTrue() && e.True != "":
		return Event{Type: corev1.EventTypeNormal, Reason: e.True, Note: e.TrueNote}, true
	case now.IsFalse() && !was.IsFalse() && e.False != "":
		note := now.Reason
		if now.Message != "" {
			note += ": " + now.Message
		}
		return Event{Type: corev1.EventTypeWarning, Reason: e.False, Note: note}, true
	}
	return Event{}, false
}

// Record records on rec, about obj, the Event For gives; call it once the
// status that made the move is written, so that a write that fails (and
// is retried) records nothing. A nil rec records nothing.
func (e Events) Record(rec events.EventRecorder, obj runtime.Object, before, after *duckv1.Status) {
	if ev, ok := e.For(before, after); ok {
		Record(rec, obj, e.Action, ev)
	}
}

// Record records ev about obj on rec, its note as written (never a format)
// and cut to MaxNote; a nil rec records nothing.
func Record(rec events.EventRecorder, obj runtime.Object, action string, ev Event) {
	if rec != nil {
		rec.Eventf(obj, nil, ev.Type, ev.Reason, action, "%s", truncate(ev.Note))
	}
}

// MaxNote is the longest note the events.k8s.io API accepts, in bytes.
const MaxNote = 1024

// truncate cuts note to MaxNote bytes on a character boundary, marking
// the cut, so that a long failure (every refused commit of a sync) still
// makes an Event.
func truncate(note string) string {
	if len(note) <= MaxNote {
		return note
	}
	const mark = "…"
	cut := MaxNote - len(mark)
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + mark
}
