package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// controllerWork is what one controller has done since knit dev started,
// from controller-runtime's metrics.
type controllerWork struct {
	reconciles float64 // controller_runtime_reconcile_total, every result
	queued     float64 // workqueue_depth
	active     float64 // controller_runtime_active_workers
}

// readControllerWork scrapes url (knit dev's /metrics) for every
// controller's reconciles, queue depth and busy workers.
func readControllerWork(ctx context.Context, url string) (map[string]controllerWork, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return parseControllerWork(resp.Body)
}

// parseControllerWork reads the Prometheus text format.
func parseControllerWork(r io.Reader) (map[string]controllerWork, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	work := map[string]controllerWork{}
	add := func(family, label string, set func(*controllerWork, float64)) {
		f := families[family]
		if f == nil {
			return
		}
		for _, m := range f.GetMetric() {
			name := labelValue(m, label)
			if name == "" {
				continue
			}
			w := work[name]
			set(&w, metricValue(m))
			work[name] = w
		}
	}
	add("controller_runtime_reconcile_total", "controller", func(w *controllerWork, v float64) { w.reconciles += v })
	add("workqueue_depth", "name", func(w *controllerWork, v float64) { w.queued += v })
	add("controller_runtime_active_workers", "controller", func(w *controllerWork, v float64) { w.active += v })
	return work, nil
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return 0
}

// resynced reports whether every controller of want reconciled at least
// the objects want counts for it, and every controller is idle: nothing
// queued, no worker busy. pending says what is not done yet.
func resynced(work map[string]controllerWork, want map[string]int) (done bool, pending string) {
	var waiting []string
	for _, name := range sortedKeys(want) {
		if got := work[name].reconciles; got < float64(want[name]) {
			waiting = append(waiting, fmt.Sprintf("%s %.0f/%d", name, got, want[name]))
		}
	}
	for _, name := range sortedKeys(work) {
		if w := work[name]; w.queued > 0 || w.active > 0 {
			waiting = append(waiting, fmt.Sprintf("%s busy (%.0f queued, %.0f working)", name, w.queued, w.active))
		}
	}
	return len(waiting) == 0, strings.Join(waiting, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// waitResync polls url until resynced says done, and returns how long
// that took from began.
func waitResync(ctx context.Context, url string, want map[string]int, began time.Time, timeout time.Duration) (time.Duration, error) {
	deadline := began.Add(timeout)
	pending := "nothing scraped yet"
	for time.Now().Before(deadline) {
		work, err := readControllerWork(ctx, url)
		if err != nil {
			pending = err.Error()
		} else if done, p := resynced(work, want); done {
			return time.Since(began), nil
		} else {
			pending = p
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("no full resync within %s: %s", timeout, pending)
}
