package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// The queue-proxy's targets are issue #12's, judged on the process rows
// (a queue-proxy runs as its own process beside the app); the others are
// DESIGN.md's "Performance targets".
const (
	targetVsKnative         = 1.5
	targetVsBare            = 1.3
	targetQueueAddedP50     = 150 * time.Microsecond
	targetQueueRSS          = 4 << 20
	targetActivatorAddedP50 = 500 * time.Microsecond
	targetColdBeyondApp     = 50 * time.Millisecond
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
	for _, ref := range []struct {
		what  string
		name  func(knit string) string
		ratio float64
	}{
		{fmt.Sprintf("Knative's queue-proxy %s", knativeVersion), func(knit string) string { return peerOf(knit) }, targetVsKnative},
		{"the pooled bare proxy (bareproxy)", func(string) string { return pathProcBare }, targetVsBare},
	} {
		for _, c := range []int{10, 100} {
			out = append(out, r.ratioTarget(fmt.Sprintf("knit-queue req/s ≥ %.1f × %s at c%d", ref.ratio, ref.what, c), c, ref.name, ref.ratio))
		}
	}
	out = append(out, r.addedTarget(), r.rssTarget(false), r.rssTarget(true), r.replicaTarget(), r.activatorTarget(), r.coldTarget())
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
// names, at cc=0 and cc=10: met when both are.
func (r *report) ratioTarget(what string, c int, ref func(knit string) string, want float64) target {
	var parts []string
	measured, met := true, true
	for _, pair := range knitPairs {
		k, okK := r.result(pair.knit, c)
		base, okB := r.result(ref(pair.knit), c)
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

func (r *report) addedTarget() target {
	direct, okD := r.result(queuebench.Direct, 1)
	var parts []string
	measured, met := okD, okD
	for _, pair := range knitPairs {
		k, ok := r.result(pair.knit, 1)
		if !ok || !okD {
			measured = false
			continue
		}
		added := k.P50 - direct.P50
		parts = append(parts, fmt.Sprintf("cc=%d +%s", procCC(pair.knit), fmtMs(added)))
		met = met && added < targetQueueAddedP50
	}
	return target{
		what:     fmt.Sprintf("knit-queue adds < %s at p50 over direct at c1", fmtMs(targetQueueAddedP50)),
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

func (r *report) coldTarget() target {
	t := target{what: fmt.Sprintf("cold start < %s beyond the app's own start (medians)", fmtColdMs(targetColdBeyondApp)), verdict: verdict(false, false)}
	if c := r.cold; c != nil && len(c.runs) > 0 {
		app, cold := median(c.runs, func(r coldRun) time.Duration { return r.app }), median(c.runs, func(r coldRun) time.Duration { return r.ttfb })
		t.measured = fmt.Sprintf("%s − %s = %s", fmtColdMs(cold), fmtColdMs(app), fmtColdMs(cold-app))
		t.verdict = verdict(true, cold-app < targetColdBeyondApp)
	}
	return t
}
