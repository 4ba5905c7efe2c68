package events

import (
	"context"
	"encoding/json"
)

// Store keeps each sink's undelivered events, and its counts, where they
// outlive the process that delivers them, so a restart (of knit dev, or a
// new controller leader on a cluster) resumes delivery where the last one
// stopped. A Dispatcher with a Store reads a sink's State when the sink is
// added, before delivering anything to it, and writes it after every
// change; it is the only writer of a sink's state while the sink is set.
type Store interface {
	// Load returns the sink's saved state: the zero State, no error, when
	// there is none.
	Load(ctx context.Context, sink string) (State, error)
	// Save replaces the sink's saved state.
	Save(ctx context.Context, sink string, s State) error
	// Delete forgets the sink's state: it was removed. Deleting a state
	// that does not exist is not an error.
	Delete(ctx context.Context, sink string) error
	// Sinks lists the sinks that have a saved state, so states of sinks
	// removed while no Dispatcher ran can be deleted.
	Sinks(ctx context.Context) ([]string, error)
}

// State is what a Store keeps of one sink. Its JSON form is how stores
// write it.
type State struct {
	// Events wait for delivery, oldest first, the one in flight included:
	// each a CloudEvent in its structured JSON form, with its original id.
	Events []json.RawMessage `json:"events,omitempty"`
	// Recent are the ids of the last events the sink took (or refused for
	// good), oldest first: an event announced again with one of them is
	// a repeat and is not sent again.
	Recent []string `json:"recent,omitempty"`
	// Delivered and Dropped count since the sink was first added, so an
	// EventSink's status keeps its counts across restarts.
	Delivered int64 `json:"delivered,omitempty"`
	Dropped   int64 `json:"dropped,omitempty"`
}
