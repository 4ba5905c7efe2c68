package activator

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/knitops/knit/internal/hopauth"
)

// Paths under the autoscaler's URL an HTTPReporter posts JSON to.
const (
	// StatsPath receives a StatBatch every report round.
	StatsPath = "/activator/stats"
	// PokePath receives a PokeBatch as soon as a request waits for a
	// Revision with no ready replica.
	PokePath = "/activator/poke"
)

// RevisionKey names a Revision on the wire.
type RevisionKey struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// NamespacedName is the key the autoscaler's KPA takes.
func (k RevisionKey) NamespacedName() types.NamespacedName {
	return types.NamespacedName{Namespace: k.Namespace, Name: k.Name}
}

// Stat is one Revision's load the activator held over a report window;
// the receiver hands it to KPA.ActivatorLoad.
type Stat struct {
	RevisionKey
	// AverageConcurrency is the time-weighted average of requests in the
	// activator for the Revision, waiting or in flight.
	AverageConcurrency float64 `json:"averageConcurrency"`
	// RequestsPerSecond is arrivals over the window.
	RequestsPerSecond float64 `json:"requestsPerSecond"`
}

// StatBatch is the body of POST StatsPath: one report round.
type StatBatch struct {
	// Activator names the sender (its pod), for logs.
	Activator string `json:"activator,omitempty"`
	Stats     []Stat `json:"stats"`
}

// PokeBatch is the body of POST PokePath; the receiver calls KPA.Poke
// for each Revision.
type PokeBatch struct {
	Activator string        `json:"activator,omitempty"`
	Revisions []RevisionKey `json:"revisions"`
}

// HTTPReporter is a Reporter for an activator running apart from the
// autoscaler: pokes are posted at once, loads once per report round
// (Flush). Requests never wait on it. Start runs the sender.
type HTTPReporter struct {
	base   string
	name   string
	keys   *hopauth.Keyring
	client *http.Client
	log    *slog.Logger
	wake   chan struct{}

	mu      sync.Mutex
	stats   map[types.NamespacedName]Stat
	pokes   map[types.NamespacedName]bool
	failing bool
}

// NewHTTPReporter posts to the autoscaler at baseURL (http or https,
// StatsPath and PokePath appended), naming itself name in each batch and
// bearing keys' token for hopauth.PurposeAutoscaler, without which the
// autoscaler refuses a report.
func NewHTTPReporter(baseURL, name string, keys *hopauth.Keyring, log *slog.Logger) (*HTTPReporter, error) {
	if keys == nil {
		return nil, errors.New("autoscaler reports need the internal keys")
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("autoscaler URL %q: want http(s)://host[:port][/path]", baseURL)
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &HTTPReporter{
		base:   strings.TrimSuffix(baseURL, "/"),
		name:   name,
		keys:   keys,
		client: &http.Client{Timeout: 5 * time.Second},
		log:    log,
		wake:   make(chan struct{}, 1),
		stats:  map[types.NamespacedName]Stat{},
		pokes:  map[types.NamespacedName]bool{},
	}, nil
}

// Poke implements Reporter: posted as soon as the sender is free.
func (r *HTTPReporter) Poke(rev types.NamespacedName) {
	r.mu.Lock()
	r.pokes[rev] = true
	r.mu.Unlock()
	r.signal()
}

// ActivatorLoad implements Reporter: kept for the next Flush, the latest
// figure per Revision winning.
func (r *HTTPReporter) ActivatorLoad(rev types.NamespacedName, concurrency, rps float64) {
	r.mu.Lock()
	r.stats[rev] = Stat{RevisionKey: RevisionKey{rev.Namespace, rev.Name}, AverageConcurrency: concurrency, RequestsPerSecond: rps}
	r.mu.Unlock()
}

// Flush ends a report round: the loads kept go out.
func (r *HTTPReporter) Flush() { r.signal() }

func (r *HTTPReporter) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Start sends until ctx ends. It implements manager.Runnable.
func (r *HTTPReporter) Start(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.wake:
			r.send(ctx)
		}
	}
}

// NeedLeaderElection is false: every activator replica reports.
func (r *HTTPReporter) NeedLeaderElection() bool { return false }

// send posts the pokes, then the loads, gathered since the last send. A
// failed post is dropped: a poke repeats while requests wait, and load
// is reported again next round.
func (r *HTTPReporter) send(ctx context.Context) {
	r.mu.Lock()
	pokes, stats := r.pokes, r.stats
	r.pokes, r.stats = map[types.NamespacedName]bool{}, map[types.NamespacedName]Stat{}
	r.mu.Unlock()
	if len(pokes) > 0 {
		batch := PokeBatch{Activator: r.name}
		for _, key := range slices.SortedFunc(maps.Keys(pokes), compareKeys) {
			batch.Revisions = append(batch.Revisions, RevisionKey{key.Namespace, key.Name})
		}
		r.result(PokePath, r.post(ctx, PokePath, batch))
	}
	if len(stats) > 0 {
		batch := StatBatch{Activator: r.name}
		for _, key := range slices.SortedFunc(maps.Keys(stats), compareKeys) {
			batch.Stats = append(batch.Stats, stats[key])
		}
		r.result(StatsPath, r.post(ctx, StatsPath, batch))
	}
}

func compareKeys(a, b types.NamespacedName) int {
	return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

func (r *HTTPReporter) post(ctx context.Context, path string, body any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	r.keys.Authorize(req, hopauth.PurposeAutoscaler)
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s: %s", r.base+path, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

// result logs a failure once, at Warn, until a post succeeds again.
func (r *HTTPReporter) result(path string, err error) {
	r.mu.Lock()
	was := r.failing
	r.failing = err != nil
	r.mu.Unlock()
	switch {
	case err != nil && !was:
		r.log.Warn("Reporting to the autoscaler failed; retrying every round", "path", path, "err", err)
	case err != nil:
		r.log.Debug("Reporting to the autoscaler failed", "path", path, "err", err)
	case was:
		r.log.Info("Reporting to the autoscaler works again")
	}
}
