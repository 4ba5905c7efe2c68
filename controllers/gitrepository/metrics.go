package gitrepository

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The two costly things a pass may do, counted per repository so an
// operator (and the tests) can see that a status change costs neither.
var (
	fetchesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "knit_gitrepository_fetches_total",
		Help: "Fetches of a GitRepository's remote (ls-remote, then the objects of new heads).",
	}, []string{"namespace", "name"})
	appliesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "knit_gitrepository_applies_total",
		Help: "Render and server-side apply passes over a GitRepository's tracked branches.",
	}, []string{"namespace", "name"})
)

func init() { metrics.Registry.MustRegister(fetchesTotal, appliesTotal) }

// forgetMetrics drops a deleted repository's series.
func forgetMetrics(namespace, name string) {
	fetchesTotal.DeleteLabelValues(namespace, name)
	appliesTotal.DeleteLabelValues(namespace, name)
}
