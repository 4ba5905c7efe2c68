package kpa

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	"github.com/knitops/knit/dataplane/activator"
	"github.com/knitops/knit/internal/hopauth"
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
	keys := hopauth.Generate()
	srv := httptest.NewServer(k.ActivatorReceiver(keys))
	defer srv.Close()
	rep, err := activator.NewHTTPReporter(srv.URL, "activator-0", keys, nil)
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
	keys := hopauth.Generate()
	srv := httptest.NewServer(newKPA(t, &clock).ActivatorReceiver(keys))
	defer srv.Close()
	for _, path := range []string{activator.StatsPath, activator.PokePath} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewBufferString("{not json"))
		keys.Authorize(req, hopauth.PurposeAutoscaler)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s with a broken body = %d, want 400", path, resp.StatusCode)
		}
	}
}

// atZero is a KPA deciding hello-00001 at zero replicas, past its first
// tick, with no wake pending.
func atZero(t *testing.T, clock *time.Time) (*KPA, *autoscalingv1alpha1.PodAutoscaler) {
	t.Helper()
	k := newKPA(t, clock)
	pa := newPA(map[string]string{"autoscaling.knative.dev/target": "10"})
	k.Recommend(context.Background(), pa, 0, 0)
	*clock = clock.Add(2 * time.Second)
	for len(k.wakes) > 0 {
		<-k.wakes
	}
	return k, pa
}

func post(t *testing.T, url string, body any, auth string) int {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// desiredAfterTicks is the scale the KPA wants after n ticks.
func desiredAfterTicks(k *KPA, pa *autoscalingv1alpha1.PodAutoscaler, clock *time.Time, n int) int32 {
	var rec int32
	for range n {
		*clock = clock.Add(2 * time.Second)
		k.tick(context.Background())
		rec = k.Recommend(context.Background(), pa, 0, 0).DesiredScale
	}
	return rec
}

var hello = activator.RevisionKey{Namespace: "default", Name: "hello-00001"}

// Any pod can reach the autoscaler's Service: a report without the
// activators' token is refused and changes nothing, neither a stat nor
// a poke, however large.
func TestActivatorReceiverRefusesUnauthenticatedReports(t *testing.T) {
	clock := start.Add(10 * time.Minute)
	k, pa := atZero(t, &clock)
	srv := httptest.NewServer(k.ActivatorReceiver(hopauth.Generate()))
	defer srv.Close()
	forged := "Bearer " + hopauth.Generate().Token(hopauth.PurposeAutoscaler)
	for _, auth := range []string{"", forged} {
		if code := post(t, srv.URL+activator.StatsPath, activator.StatBatch{Stats: []activator.Stat{{RevisionKey: hello, AverageConcurrency: 1000, RequestsPerSecond: 1000}}}, auth); code != http.StatusUnauthorized {
			t.Errorf("stats with Authorization %q: %d, want 401", auth, code)
		}
		if code := post(t, srv.URL+activator.PokePath, activator.PokeBatch{Revisions: []activator.RevisionKey{hello}}, auth); code != http.StatusUnauthorized {
			t.Errorf("poke with Authorization %q: %d, want 401", auth, code)
		}
	}
	if len(k.wakes) > 0 {
		t.Error("an unauthenticated poke woke the PodAutoscaler")
	}
	if got := desiredAfterTicks(k, pa, &clock, 3); got != 0 {
		t.Errorf("desired scale after unauthenticated reports of 1000 in flight = %d, want 0", got)
	}
}

// Even the activators' token cannot claim impossible load: a negative,
// infinite or NaN figure is refused, whole batch, before anything is
// recorded.
func TestActivatorReceiverRefusesImpossibleStats(t *testing.T) {
	clock := start.Add(10 * time.Minute)
	k, pa := atZero(t, &clock)
	keys := hopauth.Generate()
	srv := httptest.NewServer(k.ActivatorReceiver(keys))
	defer srv.Close()
	auth := "Bearer " + keys.Token(hopauth.PurposeAutoscaler)
	for _, bad := range []string{`-1`, `1e400`, `"NaN"`} {
		body := json.RawMessage(`{"stats":[{"namespace":"default","name":"hello-00001","averageConcurrency":1000,"requestsPerSecond":1000},` +
			`{"namespace":"default","name":"hello-00001","averageConcurrency":` + bad + `,"requestsPerSecond":1}]}`)
		if code := post(t, srv.URL+activator.StatsPath, body, auth); code != http.StatusBadRequest {
			t.Errorf("a stat of %s: %d, want 400", bad, code)
		}
	}
	if got := desiredAfterTicks(k, pa, &clock, 3); got != 0 {
		t.Errorf("desired scale after refused batches = %d, want 0", got)
	}
}

// The activators' load counts while they keep reporting it, not for
// ever: an activator that stopped (or a report nobody repeats) must not
// hold a Revision's scale up.
func TestActivatorLoadExpires(t *testing.T) {
	clock := start.Add(10 * time.Minute)
	k, pa := atZero(t, &clock)
	keys := hopauth.Generate()
	srv := httptest.NewServer(k.ActivatorReceiver(keys))
	defer srv.Close()
	auth := "Bearer " + keys.Token(hopauth.PurposeAutoscaler)
	if code := post(t, srv.URL+activator.StatsPath, activator.StatBatch{Stats: []activator.Stat{{RevisionKey: hello, AverageConcurrency: 30, RequestsPerSecond: 30}}}, auth); code != http.StatusNoContent {
		t.Fatalf("authenticated stats: %d, want 204", code)
	}
	if got := desiredAfterTicks(k, pa, &clock, 1); got < 1 {
		t.Fatalf("desired scale with 30 in the activator = %d, want at least 1", got)
	}
	k.mu.Lock()
	rev := k.revs[types.NamespacedName{Namespace: "default", Name: "hello-00001"}]
	k.mu.Unlock()
	clock = clock.Add(activatorLoadMaxAge)
	k.collect(context.Background(), types.NamespacedName{Namespace: "default", Name: "hello-00001"})
	rev.mu.Lock()
	defer rev.mu.Unlock()
	if c, r := rev.activatorLoad(clock); c != 0 || r != 0 {
		t.Errorf("activator load %s after the last report = %v, %v; want 0, 0", activatorLoadMaxAge, c, r)
	}
}
