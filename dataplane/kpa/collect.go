package kpa

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/knitops/knit/dataplane/queue"
	"github.com/knitops/knit/internal/endpointslices"
	"github.com/knitops/knit/internal/names"
)

// metricsPortName is the private Service port that reaches the
// queue-proxies' stats.
const metricsPortName = "http-autometric"

// Start runs the tick loop until ctx ends: every tick interval it records
// each Revision's load, decides, and wakes its PodAutoscaler when the
// decision changed. An edit of
// config-autoscaler's tick-interval takes effect from the next tick. It
// implements manager.Runnable.
func (k *KPA) Start(ctx context.Context) error {
	interval := k.config().TickInterval
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			k.tick(ctx)
			if now := k.config().TickInterval; now != interval {
				interval = now
				ticker.Reset(interval)
			}
		}
	}
}

func (k *KPA) tick(ctx context.Context) {
	k.mu.Lock()
	keys := make([]types.NamespacedName, 0, len(k.revs))
	for key := range k.revs {
		keys = append(keys, key)
	}
	k.mu.Unlock()
	var wg sync.WaitGroup
	for _, key := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k.collect(ctx, key)
			if k.decide(key) {
				k.wake(key)
			}
		}()
	}
	wg.Wait()
}

// decide runs the Revision's decider for this tick and reports whether its
// decision changed, as Knative's autoscaler informs the PodAutoscaler
// reconciler only then: waking every PodAutoscaler every tick cost a
// reconcile each (a Get, the SKS compared, a status compared) 500 times a
// second with a thousand Revisions at zero. What time alone changes (a
// grace period ending) comes back through the reconcile's RequeueAfter.
func (k *KPA) decide(key types.NamespacedName) bool {
	rev := k.lookup(key)
	if rev == nil {
		return false
	}
	rev.mu.Lock()
	defer rev.mu.Unlock()
	if rev.decider == nil {
		return false
	}
	before := rev.decider.Status()
	d := rev.decider.Scale(k.now(), rev.ready)
	return d.Valid && (d.DesiredPodCount != before.DesiredPodCount || d.ExcessBurstCapacity != before.ExcessBurstCapacity || d.InPanic != before.InPanic)
}

// collect scrapes every queue-proxy of the Revision, adds what the
// activator holds, and records the total in the decider.
func (k *KPA) collect(ctx context.Context, key types.NamespacedName) {
	concurrency, rps := k.scrapeRevision(ctx, key)
	rev := k.lookup(key)
	if rev == nil {
		return
	}
	rev.mu.Lock()
	defer rev.mu.Unlock()
	if rev.decider == nil {
		return
	}
	now := k.now()
	ac, arps := rev.activatorLoad(now)
	rev.decider.Record(now, concurrency+ac, rps+arps)
}

func (k *KPA) scrapeRevision(ctx context.Context, key types.NamespacedName) (concurrency, rps float64) {
	// Every Revision on every tick: the index makes this a map lookup
	// whatever the namespace holds, and a Revision at zero (no slices, or
	// none ready) costs nothing more. The slices are only read, into
	// URLs, and not kept: no copy of them.
	slices, err := endpointslices.List(ctx, k.endpoints, types.NamespacedName{Namespace: key.Namespace, Name: names.PrivateService(key.Name)},
		client.UnsafeDisableDeepCopy)
	if err != nil {
		log.FromContext(ctx).Error(err, "Listing endpoints to scrape", "revision", key)
		return 0, 0
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, url := range statsURLs(endpointslices.Trusted(ctx, slices)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := k.scrapeOne(ctx, url)
			if err != nil {
				return // a replica starting or stopping; the next tick catches up
			}
			c, r := ownLoad(st)
			mu.Lock()
			concurrency += c
			rps += r
			mu.Unlock()
		}()
	}
	wg.Wait()
	return concurrency, rps
}

// ownLoad is a replica's load without what came through the activator,
// as Knative's collector counts it: the activator reports the requests it
// holds, waiting or proxied, itself (ActivatorLoad), so a proxied request
// counted here too would count twice, and the autoscaler would ask for
// more pods than the load needs whenever the activator stays in the path
// (long gRPC streams behind a small target burst capacity).
func ownLoad(st queue.Stat) (concurrency, rps float64) {
	concurrency = max(st.AverageConcurrentRequests-st.AverageProxiedConcurrentRequests, 0)
	rps = st.RequestsPerSecond
	if st.RequestCount > 0 {
		rps *= max(st.RequestCount-st.ProxiedRequestCount, 0) / st.RequestCount
	}
	return concurrency, rps
}

// statsURLs lists the stats endpoint of every ready replica.
func statsURLs(slices []discoveryv1.EndpointSlice) []string {
	return ReplicaURLs(slices, queue.StatsPath)
}

// ReplicaURLs lists path on the queue-proxy metrics port of every ready
// replica in a revision's private EndpointSlices: where the autoscaler
// reads load and a canary analysis reads request counts and latencies.
func ReplicaURLs(slices []discoveryv1.EndpointSlice, path string) []string {
	var urls []string
	for _, s := range slices {
		var port int32
		for _, p := range s.Ports {
			if p.Name != nil && *p.Name == metricsPortName && p.Port != nil {
				port = *p.Port
			}
		}
		if port == 0 {
			continue
		}
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				urls = append(urls, "http://"+net.JoinHostPort(a, strconv.Itoa(int(port)))+path)
			}
		}
	}
	return urls
}

func (k *KPA) scrapeOne(ctx context.Context, url string) (queue.Stat, error) {
	var st queue.Stat
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return st, err
	}
	resp, err := k.scrape.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("scrape %s: %s", url, resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}
