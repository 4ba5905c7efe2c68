package kpa

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/knitops/knit/dataplane/activator"
)

// An activator in its own process reports over HTTP: its poke reaches the
// KPA through the receiver and wakes the PodAutoscaler at once.
func TestActivatorReportsOverHTTP(t *testing.T) {
	clock := start.Add(10 * time.Minute)
	k := newKPA(t, &clock)
	ctx := context.Background()
	pa := newPA(nil)
	k.Recommend(ctx, pa, 0, 0)
	clock = clock.Add(2 * time.Second) // past the decider's first tick
	for len(k.wakes) > 0 {
		<-k.wakes
	}
	srv := httptest.NewServer(k.ActivatorReceiver())
	defer srv.Close()
	rep, err := activator.NewHTTPReporter(srv.URL, "activator-0", nil)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = rep.Start(runCtx) }()
	rep.Poke(types.NamespacedName{Namespace: "default", Name: "hello-00001"})

	select {
	case ev := <-k.Wakes():
		if ev.Object.GetName() != "hello-00001" {
			t.Errorf("woke %s, want hello-00001", ev.Object.GetName())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the poke sent over HTTP never woke the PodAutoscaler")
	}
	if rec := k.Recommend(ctx, pa, 0, 0); rec.DesiredScale < 1 {
		t.Errorf("desired scale after the poke = %d, want at least 1", rec.DesiredScale)
	}
}

func TestActivatorReceiverRefusesGarbage(t *testing.T) {
	clock := start
	srv := httptest.NewServer(newKPA(t, &clock).ActivatorReceiver())
	defer srv.Close()
	for _, path := range []string{activator.StatsPath, activator.PokePath} {
		resp, err := http.Post(srv.URL+path, "application/json", bytes.NewBufferString("{not json"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s with a broken body = %d, want 400", path, resp.StatusCode)
		}
	}
}
