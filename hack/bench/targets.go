package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// The queue-proxy's targets are judged on the process rows (a
// queue-proxy runs as its own process beside the app): its throughput
// against Knative's and its added latency on every request shape, so no
// target is met by the one shape its fast path serves; against the bare
// proxy on GET. The others are DESIGN.md's "Performance targets".
const (
	targetVsKnative         = 1.5
	targetVsBare            = 1.3
	targetQueueAddedP50     = 100 * time.Microsecond
	targetQueueRSS          = 4 << 20
	targetActivatorAddedP50 = 500 * time.Microsecond
	targetColdBeyondApp     = 50 * time.Millisecond
	// targetImageColdBeyondApp is an image Revision's: a container
	// runtime's start (snapshot, mount, runc) on top of knit's path.
	targetImageColdBeyondApp = 100 * time.Millisecond
)

// target is one row of the targets table.
type target struct{ what, measured, verdict string }

func verdict(measured bool, met bool) string {
	switch {
	case !measured:
		return "not measured"
	case met:
		return "target met"
	default:
		return "**target not met**"
	}
}

func (r *report) targets() []target {
	var out []target
	knative := func(knit string) string { return peerOf(knit) }
	for _, sh := range r.opts.shapes {
		for _, c := range judgedConcurrency(sh, r.opts.concurrencyOf(sh)) {
			what := fmt.Sprintf("knit-queue req/s ≥ %.1f × Knative's queue-proxy %s, %s at c%d", targetVsKnative, knativeVersion, sh.Label(), c)
			out = append(out, r.ratioTarget(what, sh, c, knative, targetVsKnative))
		}
	}
	for _, c := range judgedConcurrency(queuebench.ShapeGet, nil) {
		what := fmt.Sprintf("knit-queue req/s ≥ %.1f × the pooled bare proxy (bareproxy), GET at c%d", targetVsBare, c)
		out = append(out, r.ratioTarget(what, queuebench.ShapeGet, c, func(string) string { return pathProcBare }, targetVsBare))
	}
	for _, sh := range r.opts.shapes {
		out = append(out, r.addedTarget(sh))
	}
	out = append(out, r.rssTarget(false), r.rssTarget(true), r.replicaTarget(), r.activatorTarget(), r.coldTarget(), r.imageColdTarget(), r.dockerfileTarget(), r.clusterDockerfileTarget())
	return out
}

// judgedConcurrency is where a throughput target is judged for a shape:
// GET at c10 and c100, as always; another shape at the concurrencies of
// 10 and up it ran at, c10 when it ran at none (then not measured). At
// c1 the load generator's own round trip dominates every path alike.
func judgedConcurrency(shape queuebench.Shape, ran []int) []int {
	if shape == queuebench.ShapeGet {
		return []int{10, 100}
	}
	var out []int
	for _, c := range ran {
		if c >= 10 {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return []int{10}
	}
	return out
}

// peerOf is the Knative path a knit-queue path is compared with.
func peerOf(knit string) string {
	for _, p := range knitPairs {
		if p.knit == knit {
			return p.knative
		}
	}
	return ""
}

// ratioTarget judges knit-queue's req/s over the reference path ref
// names, for shape at concurrency c, at cc=0 and cc=10: met when both
// are.
func (r *report) ratioTarget(what string, shape queuebench.Shape, c int, ref func(knit string) string, want float64) target {
	var parts []string
	measured, met := true, true
	for _, pair := range knitPairs {
		k, okK := r.resultOf(shape, pair.knit, c)
		base, okB := r.resultOf(shape, ref(pair.knit), c)
		if !okK || !okB {
			measured = false
			continue
		}
		x := k.RequestsPerSec / base.RequestsPerSec
		parts = append(parts, fmt.Sprintf("cc=%d %.2f×", procCC(pair.knit), x))
		met = met && x >= want && k.Errors == 0
	}
	return target{what: what, measured: strings.Join(parts, ", "), verdict: verdict(measured, met)}
}

// addedTarget judges knit-queue's p50 over direct's for shape at c1,
// at cc=0 and cc=10: met when both are.
func (r *report) addedTarget(shape queuebench.Shape) target {
	direct, okD := r.resultOf(shape, queuebench.Direct, 1)
	var parts []string
	measured, met := okD, okD
	for _, pair := range knitPairs {
		k, ok := r.resultOf(shape, pair.knit, 1)
		if !ok || !okD {
			measured = false
			continue
		}
		added := k.P50 - direct.P50
		parts = append(parts, fmt.Sprintf("cc=%d +%s", procCC(pair.knit), fmtMs(added)))
		met = met && added <= targetQueueAddedP50 && k.Errors == 0
	}
	return target{
		what:     fmt.Sprintf("knit-queue adds ≤ %s at p50 over direct, %s at c1", fmtMs(targetQueueAddedP50), shape.Label()),
		measured: strings.Join(parts, ", "), verdict: verdict(measured, met),
	}
}

// rssTarget judges knit-queue's idle memory (cc=0): its whole RSS, or
// with anonOnly the part each further replica adds.
func (r *report) rssTarget(anonOnly bool) target {
	t := target{what: fmt.Sprintf("knit-queue RSS per replica < %s, idle", fmtMiB(targetQueueRSS)), verdict: verdict(false, false)}
	if anonOnly {
		t.what = fmt.Sprintf("the same for its own (anon) memory alone, which each replica adds; file pages are shared")
	}
	for _, m := range r.request.mem {
		if m.path.name != pathProcKnitCC0 || m.start.rss == 0 {
			continue
		}
		got := m.start.rss
		t.measured = fmt.Sprintf("%s (anon %s + file %s)", fmtMiB(m.start.rss), fmtMiB(m.start.anon), fmtMiB(m.start.file))
		if anonOnly {
			got = m.start.anon
			t.measured = fmtMiB(m.start.anon)
		}
		t.verdict = verdict(true, got < targetQueueRSS)
	}
	return t
}

// replicaTarget judges the queue-proxy containers of the warm replicas on
// the cluster by their working set, the memory the kubelet charges a
// replica: met when every replica's is under the target.
func (r *report) replicaTarget() target {
	t := target{what: fmt.Sprintf("the same as the kubelet counts it on the cluster: queue-proxy container's working set < %s, each replica", fmtMiB(targetQueueRSS)), verdict: verdict(false, false)}
	if r.cluster == nil {
		return t
	}
	var parts []string
	measured, met := false, true
	for _, u := range r.cluster.queueProxyUsage() {
		parts = append(parts, fmt.Sprintf("replica %d: %s (RSS %s)", u.replica, fmtMiB(u.workingSet), fmtMiB(u.rss)))
		measured, met = true, met && u.workingSet < targetQueueRSS
	}
	t.measured, t.verdict = strings.Join(parts, ", "), verdict(measured, met)
	return t
}

func (r *report) activatorTarget() target {
	var parts []string
	measured, met := false, false
	for _, c := range r.opts.concurrency {
		act, okA := r.result(pathIngressActivator, c)
		q, okQ := r.result(pathIngressQueue, c)
		if !okA || !okQ {
			continue
		}
		added := act.P50 - q.P50
		parts = append(parts, fmt.Sprintf("c%d +%s", c, fmtMs(added)))
		if c == 1 {
			measured, met = true, added < targetActivatorAddedP50
		}
	}
	return target{
		what:     fmt.Sprintf("activator in path adds < %s at p50 over ingress → queue-proxy (judged at c1)", fmtMs(targetActivatorAddedP50)),
		measured: strings.Join(parts, ", "), verdict: verdict(measured, met),
	}
}

// coldTarget judges the ko:// Revision's cold start; imageColdTarget
// the image Revision's, by the bound of a start through a container
// runtime.
func (r *report) coldTarget() target {
	t := target{what: fmt.Sprintf("cold start < %s beyond the app's own start (medians)", fmtColdMs(targetColdBeyondApp)), verdict: verdict(false, false)}
	if c := r.cold; c != nil && len(c.runs) > 0 {
		t.measured, t.verdict = judgeCold(summarize(c.runs), targetColdBeyondApp)
	}
	return t
}

func (r *report) imageColdTarget() target {
	t := target{what: fmt.Sprintf("an image Revision's cold start < %s beyond the app's own start (runc over an overlay snapshot; medians)", fmtColdMs(targetImageColdBeyondApp)), verdict: verdict(false, false)}
	if c := r.cold; c != nil && len(c.image) > 0 {
		t.measured, t.verdict = judgeCold(summarize(c.image), targetImageColdBeyondApp)
	}
	return t
}

func judgeCold(s coldSummary, bound time.Duration) (measured, v string) {
	return fmt.Sprintf("%s − %s = %s", fmtColdMs(s.ttfb), fmtColdMs(s.app), fmtColdMs(s.added())), verdict(true, s.added() < bound)
}
