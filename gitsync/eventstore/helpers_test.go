package eventstore

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knitops/knit/gitsync/events"
)

// cmpSorted compares string slices as sets.
var cmpSorted = cmp.Transformer("sorted", func(in []string) []string {
	return slices.Sorted(slices.Values(in))
})

// event is sync failure i with a message of about size bytes, as the
// dispatcher saves it.
func event(t *testing.T, i, size int) json.RawMessage {
	t.Helper()
	e, err := events.NewEvent(events.Occurrence{
		Type:     events.TypeSyncFailed,
		Resource: events.Resource{Kind: "GitRepository", Namespace: "team-a", Name: "shop"},
		Data: events.Data{Repo: "shop", Branch: "main", Commit: fmt.Sprintf("%040x", i),
			Failure: &events.Failure{Reason: "CommitRejected", Message: strings.Repeat("bad YAML \"quoted\" ", size/18)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// normalize re-encodes each event compactly, so states compare by content.
func normalize(t *testing.T, st events.State) events.State {
	t.Helper()
	out := st
	out.Events = nil
	for _, raw := range st.Events {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out.Events = append(out.Events, b)
	}
	return out
}
