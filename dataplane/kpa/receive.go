package kpa

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"

	"github.com/knitops/knit/dataplane/activator"
	"github.com/knitops/knit/internal/hopauth"
)

// maxReportBytes bounds one activator report; a batch for thousands of
// revisions is far below it.
const maxReportBytes = 1 << 20

// maxActivatorLoad bounds one Revision's reported concurrency and request
// rate: far above what one activator can hold (its waiting line is
// DefaultMaxWaiting per Revision), far below what would overflow a
// decider's sums.
const maxActivatorLoad = 1e6

// ActivatorReceiver is the autoscaler's end of the activators' reports
// when they run as separate processes (`knit activator --autoscaler-url`):
// pokes decide at once, stats join the next tick. Inside knit dev the
// activator calls the KPA directly instead. The autoscaler's Service is
// reachable from every pod, so only a request bearing keys' token for
// hopauth.PurposeAutoscaler is heard (401 otherwise), and only for
// Revisions the KPA decides for (a PodAutoscaler exists), with figures
// that are finite, not negative and at most maxActivatorLoad (400 for the
// whole batch otherwise).
func (k *KPA) ActivatorReceiver(keys *hopauth.Keyring) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+activator.StatsPath, func(w http.ResponseWriter, r *http.Request) {
		var batch activator.StatBatch
		if !decode(w, r, &batch) {
			return
		}
		if err := checkStats(batch.Stats); err != nil {
			http.Error(w, fmt.Sprintf("autoscaler: bad activator report: %v", err), http.StatusBadRequest)
			return
		}
		for _, s := range batch.Stats {
			k.ActivatorLoad(s.NamespacedName(), s.AverageConcurrency, s.RequestsPerSecond)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST "+activator.PokePath, func(w http.ResponseWriter, r *http.Request) {
		var batch activator.PokeBatch
		if !decode(w, r, &batch) {
			return
		}
		for _, rev := range batch.Revisions {
			k.Poke(rev.NamespacedName())
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return keys.RequireToken(hopauth.PurposeAutoscaler, mux)
}

// checkStats refuses figures no activator reports. encoding/json already
// refuses NaN and infinities in a number; an overflowing one is an error
// of decode.
func checkStats(stats []activator.Stat) error {
	for _, s := range stats {
		for _, v := range []float64{s.AverageConcurrency, s.RequestsPerSecond} {
			if math.IsNaN(v) || v < 0 || v > maxActivatorLoad {
				return fmt.Errorf("revision %s/%s: load %v outside [0, %g]", s.Namespace, s.Name, v, float64(maxActivatorLoad))
			}
		}
	}
	return nil
}

func decode(w http.ResponseWriter, r *http.Request, into any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxReportBytes))
	if err := dec.Decode(into); err != nil {
		http.Error(w, fmt.Sprintf("autoscaler: bad activator report: %v", err), http.StatusBadRequest)
		return false
	}
	return true
}
