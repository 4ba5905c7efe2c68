//go:build !unit

package eventstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/gitsync/events"
	"github.com/knitops/knit/internal/testapi"
)

// TestConfigMaps runs the store against a real API server: states round
// trip, a full queue (events.DefaultQueueBytes of events and the ids of
// DefaultQueueSize more) fits in a ConfigMap, Sinks lists only the
// store's own ConfigMaps, and Delete forgets.
func TestConfigMaps(t *testing.T) {
	c, err := client.New(testapi.StartT(t), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "knit-system"}}); err != nil {
		t.Fatal(err)
	}
	// Someone else's ConfigMap in the namespace is none of the store's.
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "knit-system", Name: "config-network"}}); err != nil {
		t.Fatal(err)
	}
	s := &ConfigMaps{Client: c, Reader: c, Namespace: "knit-system"}

	t.Run("a sink never saved has the zero state", func(t *testing.T) {
		st, err := s.Load(ctx, "team-a/none")
		if err != nil || !cmp.Equal(st, events.State{}) {
			t.Errorf("Load = %+v, %v", st, err)
		}
	})

	long := "team-a/" + strings.Repeat("a-very-long-event-sink-name-", 9) // longer than a ConfigMap name may be
	saved := events.State{Events: []json.RawMessage{event(t, 1, 10), event(t, 2, 10)}, Recent: []string{"x", "y"}, Delivered: 7, Dropped: 2}
	t.Run("a state round trips, and is overwritten whole", func(t *testing.T) {
		for _, st := range []events.State{{Delivered: 1, Events: []json.RawMessage{event(t, 9, 10)}}, saved} {
			if err := s.Save(ctx, long, st); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Load(ctx, long)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(normalize(t, saved), normalize(t, got)); diff != "" {
			t.Errorf("loaded (-saved +loaded):\n%s", diff)
		}
	})

	t.Run("a full queue fits", func(t *testing.T) {
		full := events.State{Delivered: 1 << 40, Dropped: 1 << 40}
		for size, i := 0, 0; ; i++ {
			e := event(t, i, 2000)
			if size+len(e) > events.DefaultQueueBytes {
				break
			}
			size += len(e)
			full.Events = append(full.Events, e)
		}
		for i := range events.DefaultQueueSize {
			full.Recent = append(full.Recent, fmt.Sprintf("%032x", i))
		}
		if err := s.Save(ctx, "team-a/full", full); err != nil {
			t.Fatalf("a full queue of %d events does not fit: %v", len(full.Events), err)
		}
		got, err := s.Load(ctx, "team-a/full")
		if err != nil || len(got.Events) != len(full.Events) || len(got.Recent) != events.DefaultQueueSize {
			t.Errorf("loaded %d events, %d ids, %v; want %d and %d", len(got.Events), len(got.Recent), err, len(full.Events), events.DefaultQueueSize)
		}
	})

	t.Run("Sinks lists the store's own; Delete forgets", func(t *testing.T) {
		sinks, err := s.Sinks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{long, "team-a/full"}, sinks, cmpSorted); diff != "" {
			t.Errorf("Sinks (-want +got):\n%s", diff)
		}
		for _, sink := range []string{long, long, "team-a/full"} { // twice: deleting the absent is fine
			if err := s.Delete(ctx, sink); err != nil {
				t.Fatal(err)
			}
		}
		if sinks, err := s.Sinks(ctx); err != nil || len(sinks) != 0 {
			t.Errorf("Sinks after Delete = %v, %v", sinks, err)
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "knit-system", Name: "config-network"}, &corev1.ConfigMap{}); err != nil {
			t.Errorf("someone else's ConfigMap: %v", err)
		}
	})
}
