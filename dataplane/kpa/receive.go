package kpa

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/knitops/knit/dataplane/activator"
)

// maxReportBytes bounds one activator report; a batch for thousands of
// revisions is far below it.
const maxReportBytes = 1 << 20

// ActivatorReceiver is the autoscaler's end of the activators' reports
// when they run as separate processes (`knit activator --autoscaler-url`):
// pokes decide at once, stats join the next tick. Inside knit dev the
// activator calls the KPA directly instead.
func (k *KPA) ActivatorReceiver() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+activator.StatsPath, func(w http.ResponseWriter, r *http.Request) {
		var batch activator.StatBatch
		if !decode(w, r, &batch) {
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
	return mux
}

func decode(w http.ResponseWriter, r *http.Request, into any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxReportBytes))
	if err := dec.Decode(into); err != nil {
		http.Error(w, fmt.Sprintf("autoscaler: bad activator report: %v", err), http.StatusBadRequest)
		return false
	}
	return true
}
