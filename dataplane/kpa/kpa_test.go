package kpa

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/api"
	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	"github.com/knitops/knit/dataplane/autoscaler"
	"github.com/knitops/knit/dataplane/queue"
	"github.com/knitops/knit/internal/endpointslices/endpointslicestest"
)

var start = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func newPA(annotations map[string]string) *autoscalingv1alpha1.PodAutoscaler {
	return &autoscalingv1alpha1.PodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-00001", Annotations: annotations, CreationTimestamp: metav1.NewTime(start)},
		Spec:       autoscalingv1alpha1.PodAutoscalerSpec{Reachability: autoscalingv1alpha1.ReachabilityReachable},
	}
}

// statsServer is a queue-proxy's stats endpoint reporting a fixed load.
func statsServer(t *testing.T, concurrency, rps float64) int32 {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(queue.Stat{AverageConcurrentRequests: concurrency, RequestsPerSecond: rps})
	}))
	t.Cleanup(srv.Close)
	return int32(srv.Listener.Addr().(*net.TCPAddr).Port)
}

func newKPA(t *testing.T, clock *time.Time, pods ...int32) *KPA {
	t.Helper()
	scheme, _ := api.NewScheme()
	b := endpointslicestest.WithIndex(fake.NewClientBuilder().WithScheme(scheme))
	for i, port := range pods {
		b = b.WithObjects(&discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "s" + string(rune('a'+i)), Labels: map[string]string{
				discoveryv1.LabelServiceName: "hello-00001-private", discoveryv1.LabelManagedBy: "knit-local-runtime"}},
			AddressType: discoveryv1.AddressTypeFQDN,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(metricsPortName), Port: ptr.To(port)}},
		})
	}
	k := New(autoscaler.DefaultConfig, b.Build())
	k.now = func() time.Time { return *clock }
	return k
}

// Three queue-proxies each reporting 10 in flight, target 10 at 70 %
// utilization: Knative's KPA wants ceil(30 / 7) = 5 pods. With the default
// target burst capacity (211) such a small revision keeps the activator in
// its path; with 0 it is served directly.
func TestRecommendScalesOnScrapedLoad(t *testing.T) {
	clock := start
	k := newKPA(t, &clock, statsServer(t, 10, 5), statsServer(t, 10, 5), statsServer(t, 10, 5))
	for _, tc := range []struct {
		tbc  string
		mode networkingv1alpha1.ServerlessServiceOperationMode
	}{{"211", networkingv1alpha1.SKSOperationModeProxy}, {"0", networkingv1alpha1.SKSOperationModeServe}} {
		pa := newPA(map[string]string{"autoscaling.knative.dev/target": "10", "autoscaling.knative.dev/target-burst-capacity": tc.tbc})
		ctx := context.Background()
		k.Forget(types.NamespacedName{Namespace: "default", Name: "hello-00001"})
		rec := k.Recommend(ctx, pa, 3, 3)
		for i := 0; i < 5; i++ {
			clock = clock.Add(2 * time.Second)
			k.tick(ctx)
			rec = k.Recommend(ctx, pa, 3, 3)
		}
		if rec.DesiredScale != 5 {
			t.Errorf("tbc %s: desired scale = %d, want 5 (30 in flight / (10 × 70 %%))", tc.tbc, rec.DesiredScale)
		}
		if rec.Mode != tc.mode {
			t.Errorf("tbc %s: mode = %s, want %s", tc.tbc, rec.Mode, tc.mode)
		}
	}
}

// The decider first decides a tick interval (2s) after it starts, as
// Knative's: a reconcile before then leaves the scale alone and asks to come
// back at the first tick, which decides on the load scraped by then.
func TestRecommendFirstDecisionAtFirstTick(t *testing.T) {
	clock := start
	k := newKPA(t, &clock, statsServer(t, 10, 5), statsServer(t, 10, 5), statsServer(t, 10, 5))
	pa := newPA(map[string]string{"autoscaling.knative.dev/target": "10"})
	ctx := context.Background()
	type got struct {
		Desired int32
		Requeue time.Duration
	}
	for _, tc := range []struct {
		name  string
		after time.Duration // since the decider started
		want  got
	}{
		{"the decider starts: no decision, back at the first tick", 0, got{3, 2 * time.Second}},
		{"a reconcile a second later: still none", time.Second, got{3, time.Second}},
		{"the first tick decides: 30 in flight at 7 per pod", 2 * time.Second, got{5, 0}},
	} {
		clock = start.Add(tc.after)
		if tc.after == 2*time.Second {
			k.tick(ctx)
		}
		rec := k.Recommend(ctx, pa, 3, 3)
		if diff := cmp.Diff(tc.want, got{rec.DesiredScale, rec.RequeueAfter}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// A request at zero: the activator's poke wakes the PodAutoscaler at once
// and the recommendation leaves zero; with no ready pod the SKS stays in
// Proxy so the activator keeps buffering.
func TestPokeScalesFromZeroAtOnce(t *testing.T) {
	clock := start.Add(10 * time.Minute)
	k := newKPA(t, &clock)
	pa := newPA(nil)
	ctx := context.Background()
	k.Recommend(ctx, pa, 0, 0)
	// Past the decider's first tick, as any decider at zero is (Knative
	// pokes only a decider whose last decision was zero).
	clock = clock.Add(2 * time.Second)
	for len(k.wakes) > 0 {
		<-k.wakes
	}
	k.Poke(types.NamespacedName{Namespace: "default", Name: "hello-00001"})
	select {
	case ev := <-k.Wakes():
		if ev.Object.GetName() != "hello-00001" {
			t.Errorf("woke %s, want hello-00001", ev.Object.GetName())
		}
	default:
		t.Fatal("poke did not wake the PodAutoscaler")
	}
	rec := k.Recommend(ctx, pa, 0, 0)
	if rec.DesiredScale < 1 {
		t.Errorf("desired scale after a poke = %d, want at least 1", rec.DesiredScale)
	}
	if rec.Mode != networkingv1alpha1.SKSOperationModeProxy {
		t.Errorf("mode = %s, want Proxy until a replica is ready", rec.Mode)
	}
}

// An operator's edit to config-autoscaler reaches a revision whose decider
// is already running: with 30 in flight on one pod and no target
// annotation, the default target 100 (70 per pod) wants 1 pod; once
// container-concurrency-target-default is 10 (7 per pod), the very next
// tick wants more, from the same decider and its windows.
func TestConfigEditReachesRunningDecider(t *testing.T) {
	clock := start
	k := newKPA(t, &clock, statsServer(t, 30, 15))
	cfg := autoscaler.DefaultConfig()
	k.config = func() *autoscaler.Config { return cfg }
	pa := newPA(map[string]string{"autoscaling.knative.dev/target-burst-capacity": "0"})
	ctx := context.Background()
	k.Recommend(ctx, pa, 1, 1)
	decide := func() int32 {
		clock = clock.Add(2 * time.Second)
		k.tick(ctx)
		return k.Recommend(ctx, pa, 1, 1).DesiredScale
	}
	if got := []int32{decide(), decide()}; got[1] != 1 {
		t.Fatalf("with the default target: desired scale = %v, want 1", got)
	}
	edited, err := autoscaler.NewConfigFromMap(map[string]string{"container-concurrency-target-default": "10"})
	if err != nil {
		t.Fatal(err)
	}
	cfg = edited // what config.Store does on an accepted edit: a new snapshot
	if got := decide(); got <= 1 {
		t.Errorf("at the tick after config-autoscaler set the target to 10: desired scale = %d, want more than 1", got)
	}
}

// A tick wakes a PodAutoscaler only when its decision changed, as
// Knative's autoscaler informs the reconciler: once the panic window (6 s)
// is full of the same load, its decision (5 pods, the same excess burst
// capacity) stays and ticks wake nobody, so a thousand idle Revisions cost
// no reconcile.
func TestTickWakesOnlyOnANewDecision(t *testing.T) {
	clock := start
	k := newKPA(t, &clock, statsServer(t, 10, 5), statsServer(t, 10, 5), statsServer(t, 10, 5))
	pa := newPA(map[string]string{"autoscaling.knative.dev/target": "10"})
	ctx := context.Background()
	k.Recommend(ctx, pa, 3, 3)
	var woken []bool
	for range 8 {
		for len(k.wakes) > 0 {
			<-k.wakes
		}
		clock = clock.Add(2 * time.Second)
		k.tick(ctx)
		woken = append(woken, len(k.wakes) > 0)
	}
	// The first tick decides (a change from no decision); the panic
	// window's average moves while it fills, then holds.
	if !woken[0] || woken[5] || woken[6] || woken[7] {
		t.Errorf("woken at ticks 1-8: %v; want the first, and none of the last three", woken)
	}
}

// While the activator is in the path it reports the requests it holds,
// proxied ones included, and the queue-proxies report the same requests
// as proxied: Knative's collector counts them once. Three replicas each
// holding 10 requests that all came through the activator, which reports
// 30: still 30 in flight, so ceil(30 / 7) = 5 pods, not 9.
func TestProxiedLoadCountsOnce(t *testing.T) {
	clock := start
	proxied := func() int32 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = json.NewEncoder(w).Encode(queue.Stat{AverageConcurrentRequests: 10, AverageProxiedConcurrentRequests: 10,
				RequestCount: 5, ProxiedRequestCount: 5, RequestsPerSecond: 5, WindowSeconds: 1})
		}))
		t.Cleanup(srv.Close)
		return int32(srv.Listener.Addr().(*net.TCPAddr).Port)
	}
	k := newKPA(t, &clock, proxied(), proxied(), proxied())
	pa := newPA(map[string]string{"autoscaling.knative.dev/target": "10"})
	rev := types.NamespacedName{Namespace: "default", Name: "hello-00001"}
	ctx := context.Background()
	rec := k.Recommend(ctx, pa, 3, 3)
	for i := 0; i < 5; i++ {
		clock = clock.Add(2 * time.Second)
		k.ActivatorLoad(rev, 30, 15)
		k.tick(ctx)
		rec = k.Recommend(ctx, pa, 3, 3)
	}
	if rec.DesiredScale != 5 {
		t.Errorf("desired scale = %d, want 5: 30 requests through the activator are 30, not 60", rec.DesiredScale)
	}
}

func TestOwnLoad(t *testing.T) {
	tests := []struct {
		name      string
		st        queue.Stat
		wantC, wR float64
	}{
		{"direct", queue.Stat{AverageConcurrentRequests: 4, RequestCount: 10, RequestsPerSecond: 5}, 4, 5},
		{"half proxied", queue.Stat{AverageConcurrentRequests: 4, AverageProxiedConcurrentRequests: 2, RequestCount: 10, ProxiedRequestCount: 5, RequestsPerSecond: 5}, 2, 2.5},
		{"all proxied", queue.Stat{AverageConcurrentRequests: 4, AverageProxiedConcurrentRequests: 4, RequestCount: 10, ProxiedRequestCount: 10, RequestsPerSecond: 5}, 0, 0},
		{"rounding never negative", queue.Stat{AverageConcurrentRequests: 1, AverageProxiedConcurrentRequests: 1.0000001}, 0, 0},
	}
	for _, tc := range tests {
		if c, r := ownLoad(tc.st); c != tc.wantC || r != tc.wR {
			t.Errorf("%s: ownLoad = %v, %v; want %v, %v", tc.name, c, r, tc.wantC, tc.wR)
		}
	}
}
