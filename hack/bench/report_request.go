package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// writeRequestPath writes the request-path section: the in-process
// table, the process table, knit against its references, and memory.
// Every table is by request shape, GET first.
func (r *report) writeRequestPath(b *strings.Builder) {
	o := r.opts
	fmt.Fprintf(b, "\n## Request path\n\n")
	fmt.Fprintf(b, "A trivial app on loopback, reached directly and through each proxy, with these request shapes:\n\n")
	fmt.Fprintf(b, "- GET: a body-less GET, answered %d bytes with Content-Length;\n", len(queuebench.AppBody))
	fmt.Fprintf(b, "- POST 4 KiB: %d bytes of body with Content-Length, which the app reads whole (it answers 400 to\n", queuebench.PostBodyBytes)
	fmt.Fprintf(b, "  any other length) before the same small answer;\n")
	fmt.Fprintf(b, "- GET streamed 1 MiB: the app writes %d bytes in %d-byte chunks, flushing each (chunked\n", queuebench.StreamBytes, queuebench.StreamChunkBytes)
	fmt.Fprintf(b, "  transfer encoding); the client reads all of it and counts it;\n")
	fmt.Fprintf(b, "- h2c GET: HTTP/2 cleartext with prior knowledge from the client through the proxy to the app, which\n")
	fmt.Fprintf(b, "  answers 505 to a request that reached it as HTTP/1.1 (each worker is net/http's client on its own\n")
	fmt.Fprintf(b, "  connection, one stream at a time: heavier than the HTTP/1.1 client, so compare h2c rows with each other).\n\n")
	fmt.Fprintf(b, "knit-queue's HTTP/1 fast path takes the two GETs (the streamed answer through its relay); the POST\n")
	fmt.Fprintf(b, "and h2c go through its ReverseProxy. Closed loop: c workers, each on its own\n")
	fmt.Fprintf(b, "kept-alive connection, send requests back to back: GET at c %s for %s per cell, the other shapes\n", fmtInts(o.concurrency), o.duration)
	fmt.Fprintf(b, "at c %s for %s per cell (%d slices, each after a %s unmeasured warm-up; the paths take turns\n", fmtInts(o.shapeConcurrency), o.shapeDuration, o.slices, o.warmup)
	fmt.Fprintf(b, "slice by slice), at most %d requests per cell. The app and the load generator run in the\n", o.maxRequests)
	fmt.Fprintf(b, "bench's process for every path.\n")

	fmt.Fprintf(b, "\n### Proxies in the bench's process\n\n")
	fmt.Fprintf(b, "These proxies share the bench's Go process (and its GC) with the app and the load generator.\n")
	fmt.Fprintf(b, "knit's queue-proxies run every feature (timeouts, stats, Prometheus metrics, probes; the breaker\n")
	fmt.Fprintf(b, "at cc=10); the ingress router's table is built from a Route and EndpointSlices as the control\n")
	fmt.Fprintf(b, "plane writes them; the activator has the cc=0 queue-proxy as its one endpoint (`SetEndpoints`,\n")
	fmt.Fprintf(b, "cc=0). The bare proxy with the default transport keeps 2 idle connections to the app and redials\n")
	fmt.Fprintf(b, "under load: it is shown for the record, the floor is the pooled one, which speaks h2c to the app\n")
	fmt.Fprintf(b, "for a request that came as h2c.\n\n")
	fmt.Fprintf(b, "| shape | c | path | req/s | p50 | p99 | × direct | × pooled bare | p50 − direct | errors |\n")
	fmt.Fprintf(b, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, cl := range r.request.cells {
		if !cl.path.proc {
			fmt.Fprintf(b, "| %s | %d | %s | %s |\n", cl.shape.Label(), cl.concurrency, cl.path.label, strings.Join(r.row(cl, queuebench.ReverseProxyPooled, false), " | "))
		}
	}
	r.writeNotCarried(b, false)

	if !r.hasProcs() {
		r.writeErrors(b)
		return
	}
	fmt.Fprintf(b, "\n### Proxies as processes of their own, as in a pod\n\n")
	fmt.Fprintf(b, "Each proxy below is a process of its own on loopback, in front of the same app, under the same\n")
	fmt.Fprintf(b, "load generator, interleaved with the paths above:\n\n")
	fmt.Fprintf(b, "- `knit-queue`, built from this tree as `make images` builds it (static, `-trimpath -ldflags \"-s -w\"`);\n")
	fmt.Fprintf(b, "- the same binary with `QUEUE_DISABLE_FAST_PATH=true` (\"fast path off\", cc=0): every request through its\n")
	fmt.Fprintf(b, "  `httputil.ReverseProxy`, so the fast path's gain shows on its own (a benchmarking and diagnostic setting);\n")
	fmt.Fprintf(b, "- Knative Serving's queue-proxy, `knative.dev/serving/cmd/queue` %s, built the same way by\n", knativeVersion)
	fmt.Fprintf(b, "  `make knative-queue` in its own module (`hack/knative`), with one file replaced so that it listens on\n")
	fmt.Fprintf(b, "  loopback only (`hack/knative/loopback/servers.go`: listen addresses, nothing else);\n")
	fmt.Fprintf(b, "- `bareproxy` (`hack/bench/bareproxy`): the pooled bare `httputil.ReverseProxy` alone, the standard library\n")
	fmt.Fprintf(b, "  only, taking h2c and speaking it to the app for a request that came as h2c, as both queue-proxies do.\n\n")
	fmt.Fprintf(b, "The queue-proxies get one environment: Knative's contract for a revision's queue-proxy with\n")
	fmt.Fprintf(b, "Knative's default config maps (Prometheus request metrics on; request log, tracing and profiling\n")
	fmt.Fprintf(b, "off), `timeoutSeconds` 300 and `responseStartTimeoutSeconds`/`idleTimeoutSeconds` 60 (all three\n")
	fmt.Fprintf(b, "timeouts armed), a TCP readiness probe of the app, `containerConcurrency` 0 or 10 (then a breaker\n")
	fmt.Fprintf(b, "with 100 queued at most in both). Each process runs with the Go runtime's default GOMAXPROCS.\n")
	fmt.Fprintf(b, "These rows are the ones the targets judge: a queue-proxy runs as its own process beside the app.\n")
	fmt.Fprintf(b, "CPU/req is the proxy process's own CPU time (user and system, from `/proc/<pid>/stat`, 10 ms\n")
	fmt.Fprintf(b, "ticks) over the measured requests: what the proxy costs per request, whatever else the machine runs.\n\n")
	fmt.Fprintf(b, "| shape | c | path | req/s | p50 | p99 | × direct | × bareproxy | × Knative | p50 − direct | errors | CPU/req |\n")
	fmt.Fprintf(b, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, cl := range r.request.cells {
		if cl.path.proc {
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s |\n", cl.shape.Label(), cl.concurrency, cl.path.label, strings.Join(r.row(cl, pathProcBare, true), " | "), fmtCPUPerRequest(cl))
		}
	}
	r.writeNotCarried(b, true)
	r.writeSideBySide(b)
	r.writeMemory(b)
	r.writeErrors(b)
}

// writeNotCarried lists the shapes a table's paths (processes or not)
// could not carry, with the reason, as n/a cells.
func (r *report) writeNotCarried(b *strings.Builder, procs bool) {
	var lines []string
	for _, sh := range r.opts.shapes {
		for _, pa := range r.request.paths {
			if pa.proc != procs || carries(pa, sh, r.request.na) {
				continue
			}
			lines = append(lines, fmt.Sprintf("- %s through %s: n/a, %s.", sh.Label(), pa.label, whyNot(pa, sh, r.request.na)))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(b, "\n%s\n", strings.Join(lines, "\n"))
	}
}

// row is a cell's columns after its label: req/s, p50, p99, × direct,
// × bare (the path named bare), × Knative (withPeer), p50 − direct,
// errors; every ratio against the same shape and concurrency.
func (r *report) row(cl cell, bare string, withPeer bool) []string {
	res := cl.result
	ratio := func(name string) string {
		base, ok := r.resultOf(cl.shape, name, cl.concurrency)
		if name == "" || !ok || base.RequestsPerSec == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f", res.RequestsPerSec/base.RequestsPerSec)
	}
	added := "–"
	if direct, ok := r.resultOf(cl.shape, queuebench.Direct, cl.concurrency); ok && cl.path.name != queuebench.Direct {
		added = fmtMs(res.P50 - direct.P50)
	}
	bound := ""
	if res.Bounded {
		bound = " (count bound)"
	}
	cols := []string{fmt.Sprintf("%.0f%s", res.RequestsPerSec, bound), fmtMs(res.P50), fmtMs(res.P99), ratio(queuebench.Direct), ratio(bare)}
	if withPeer {
		cols = append(cols, ratio(cl.path.peer))
	}
	return append(cols, added, fmt.Sprint(res.Errors))
}

// hasProcs reports whether any proxy process was measured.
func (r *report) hasProcs() bool {
	for _, cl := range r.request.cells {
		if cl.path.proc {
			return true
		}
	}
	return false
}

// knitPairs are the knit-queue process paths with their Knative peer
// and, at cc=0, the same knit-queue with its fast path off.
var knitPairs = []struct{ knit, knative, noFast string }{
	{pathProcKnitCC0, pathProcKnativeCC0, pathProcKnitCC0NoFast},
	{pathProcKnitCC10, pathProcKnativeCC10, ""},
}

// writeSideBySide is knit-queue against itself with the fast path off,
// Knative's queue-proxy and the bare proxy, shape by shape, cell by
// cell.
func (r *report) writeSideBySide(b *strings.Builder) {
	fmt.Fprintf(b, "\n### knit-queue beside its fast path off, Knative's queue-proxy and the bare proxy\n\n")
	fmt.Fprintf(b, "| shape | c | cc | knit-queue req/s | fast path off req/s | knit ÷ fast path off | Knative req/s | knit ÷ Knative | bareproxy req/s | knit ÷ bareproxy | p50 added by knit | by knit, fast path off | by Knative |\n")
	fmt.Fprintf(b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, sr := range r.opts.shapeRuns() {
		for _, pair := range knitPairs {
			for _, c := range sr.concurrency {
				if row, ok := r.sideBySideRow(sr.shape, pair.knit, pair.noFast, pair.knative, c); ok {
					fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
				}
			}
		}
	}
}

// sideBySideRow is one row of writeSideBySide; ok is false when knit
// was not measured there.
func (r *report) sideBySideRow(shape queuebench.Shape, knit, noFast, knative string, c int) ([]string, bool) {
	k, okK := r.resultOf(shape, knit, c)
	if !okK {
		return nil, false
	}
	direct, okD := r.resultOf(shape, queuebench.Direct, c)
	reqs := func(name string) []string {
		base, ok := r.resultOf(shape, name, c)
		if !ok || base.RequestsPerSec == 0 {
			return []string{"–", "–"}
		}
		return []string{fmt.Sprintf("%.0f", base.RequestsPerSec), fmt.Sprintf("**%.2f×**", k.RequestsPerSec/base.RequestsPerSec)}
	}
	added := func(name string) string {
		res, ok := r.resultOf(shape, name, c)
		if !ok || !okD {
			return "–"
		}
		return "+" + fmtMs(res.P50-direct.P50)
	}
	row := []string{shape.Label(), fmt.Sprint(c), fmt.Sprint(procCC(knit)), fmt.Sprintf("%.0f", k.RequestsPerSec)}
	row = append(row, reqs(noFast)...)
	row = append(row, reqs(knative)...)
	row = append(row, reqs(pathProcBare)...)
	return append(row, added(knit), added(noFast), added(knative)), true
}

// procCC is the containerConcurrency of a process path.
func procCC(name string) int {
	for _, cl := range []string{pathProcKnitCC10, pathProcKnativeCC10} {
		if name == cl {
			return 10
		}
	}
	return 0
}

// fmtInts is 1, 10, 100.
func fmtInts(ns []int) string {
	var parts []string
	for _, n := range ns {
		parts = append(parts, fmt.Sprint(n))
	}
	return strings.Join(parts, ", ")
}

// writeMemory is the proxy processes' resident memory.
func (r *report) writeMemory(b *strings.Builder) {
	fmt.Fprintf(b, "\n### Memory per replica\n\n")
	fmt.Fprintf(b, "Each proxy process's resident memory from `/proc/<pid>/status`, %s after it answered its first\n", memSettle)
	fmt.Fprintf(b, "requests (idle), and %s after the whole load above (idle again). RSS = anon + file: anon is the\n", memSettle)
	fmt.Fprintf(b, "process's own memory (heap, stacks, runtime), what each further replica adds; file is the pages\n")
	fmt.Fprintf(b, "of its executable mapped in, which every replica of one image on a node shares through the page\n")
	fmt.Fprintf(b, "cache, and which grows with the binary's size. Peak is VmHWM over the whole run.\n\n")
	fmt.Fprintf(b, "| process | binary | idle RSS | anon | file | RSS after the load | anon | peak RSS |\n")
	fmt.Fprintf(b, "|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, m := range r.request.mem {
		if m.start.rss == 0 {
			fmt.Fprintf(b, "| %s | %s | not measured (no /proc) | | | | | |\n", m.path.label, fmtMiB(uint64(m.binBytes)))
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", m.path.label, fmtMiB(uint64(m.binBytes)),
			fmtMiB(m.start.rss), fmtMiB(m.start.anon), fmtMiB(m.start.file), fmtMiB(m.loaded.rss), fmtMiB(m.loaded.anon), fmtMiB(m.loaded.peak))
	}
}

// writeErrors lists the cells whose requests failed.
func (r *report) writeErrors(b *strings.Builder) {
	var failures []string
	for _, cl := range r.request.cells {
		if cl.result.Errors > 0 {
			failures = append(failures, fmt.Sprintf("- %s c%d %s: %d errors; first: %v", cl.shape.Label(), cl.concurrency, cl.path.label, cl.result.Errors, cl.result.FirstErr))
		}
	}
	if len(failures) > 0 {
		fmt.Fprintf(b, "\nErrors:\n\n%s\n", strings.Join(failures, "\n"))
	}
}

// fmtCPUPerRequest is a process cell's CPU time per request.
func fmtCPUPerRequest(cl cell) string {
	if cl.cpu <= 0 || cl.result.Requests == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f µs", float64(cl.cpu/time.Nanosecond)/float64(cl.result.Requests)/1e3)
}

func fmtMiB(n uint64) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
