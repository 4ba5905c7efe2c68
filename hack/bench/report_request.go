package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// writeRequestPath writes the request-path section: the in-process
// table, the process table, knit against its references, and memory.
func (r *report) writeRequestPath(b *strings.Builder) {
	o := r.opts
	fmt.Fprintf(b, "\n## Request path\n\n")
	fmt.Fprintf(b, "A trivial app (a %d-byte answer with Content-Length) on loopback, reached directly and through\n", len(queuebench.AppBody))
	fmt.Fprintf(b, "each proxy. Closed loop: c workers, each on its own kept-alive HTTP/1.1 connection, send GET\n")
	fmt.Fprintf(b, "back to back for %s per cell (%d slices, each after a %s unmeasured warm-up; the paths take\n", o.duration, o.slices, o.warmup)
	fmt.Fprintf(b, "turns slice by slice), at most %d requests per cell. The app and the load generator run in the\n", o.maxRequests)
	fmt.Fprintf(b, "bench's process for every path.\n")

	fmt.Fprintf(b, "\n### Proxies in the bench's process\n\n")
	fmt.Fprintf(b, "These proxies share the bench's Go process (and its GC) with the app and the load generator.\n")
	fmt.Fprintf(b, "knit's queue-proxies run every feature (timeouts, stats, Prometheus metrics, probes; the breaker\n")
	fmt.Fprintf(b, "at cc=10); the ingress router's table is built from a Route and EndpointSlices as the control\n")
	fmt.Fprintf(b, "plane writes them; the activator has the cc=0 queue-proxy as its one endpoint (`SetEndpoints`,\n")
	fmt.Fprintf(b, "cc=0). The bare proxy with the default transport keeps 2 idle connections to the app and redials\n")
	fmt.Fprintf(b, "under load: it is shown for the record, the floor is the pooled one.\n\n")
	fmt.Fprintf(b, "| c | path | req/s | p50 | p99 | × direct | × pooled bare | p50 − direct | errors |\n")
	fmt.Fprintf(b, "|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, cl := range r.request.cells {
		if !cl.path.proc {
			fmt.Fprintf(b, "| %d | %s | %s |\n", cl.concurrency, cl.path.label, strings.Join(r.row(cl, queuebench.ReverseProxyPooled, false), " | "))
		}
	}

	if !r.hasProcs() {
		r.writeErrors(b)
		return
	}
	fmt.Fprintf(b, "\n### Proxies as processes of their own, as in a pod\n\n")
	fmt.Fprintf(b, "Each proxy below is a process of its own on loopback, in front of the same app, under the same\n")
	fmt.Fprintf(b, "load generator, interleaved with the paths above:\n\n")
	fmt.Fprintf(b, "- `knit-queue`, built from this tree as `make images` builds it (static, `-trimpath -ldflags \"-s -w\"`);\n")
	fmt.Fprintf(b, "- Knative Serving's queue-proxy, `knative.dev/serving/cmd/queue` %s, built the same way by\n", knativeVersion)
	fmt.Fprintf(b, "  `make knative-queue` in its own module (`hack/knative`), with one file replaced so that it listens on\n")
	fmt.Fprintf(b, "  loopback only (`hack/knative/loopback/servers.go`: listen addresses, nothing else);\n")
	fmt.Fprintf(b, "- `bareproxy` (`hack/bench/bareproxy`): the pooled bare `httputil.ReverseProxy` alone, the standard library only.\n\n")
	fmt.Fprintf(b, "The two queue-proxies get one environment: Knative's contract for a revision's queue-proxy with\n")
	fmt.Fprintf(b, "Knative's default config maps (Prometheus request metrics on; request log, tracing and profiling\n")
	fmt.Fprintf(b, "off), `timeoutSeconds` 300 and `responseStartTimeoutSeconds`/`idleTimeoutSeconds` 60 (all three\n")
	fmt.Fprintf(b, "timeouts armed), a TCP readiness probe of the app, `containerConcurrency` 0 or 10 (then a breaker\n")
	fmt.Fprintf(b, "with 100 queued at most in both). Each process runs with the Go runtime's default GOMAXPROCS.\n")
	fmt.Fprintf(b, "These rows are the ones the targets judge: a queue-proxy runs as its own process beside the app.\n")
	fmt.Fprintf(b, "CPU/req is the proxy process's own CPU time (user and system, from `/proc/<pid>/stat`, 10 ms\n")
	fmt.Fprintf(b, "ticks) over the measured requests: what the proxy costs per request, whatever else the machine runs.\n\n")
	fmt.Fprintf(b, "| c | path | req/s | p50 | p99 | × direct | × bareproxy | × Knative | p50 − direct | errors | CPU/req |\n")
	fmt.Fprintf(b, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, cl := range r.request.cells {
		if cl.path.proc {
			fmt.Fprintf(b, "| %d | %s | %s | %s |\n", cl.concurrency, cl.path.label, strings.Join(r.row(cl, pathProcBare, true), " | "), fmtCPUPerRequest(cl))
		}
	}
	r.writeSideBySide(b)
	r.writeMemory(b)
	r.writeErrors(b)
}

// row is a cell's columns after its label: req/s, p50, p99, × direct,
// × bare (the path named bare), × Knative (withPeer), p50 − direct,
// errors.
func (r *report) row(cl cell, bare string, withPeer bool) []string {
	res := cl.result
	ratio := func(name string) string {
		base, ok := r.result(name, cl.concurrency)
		if name == "" || !ok || base.RequestsPerSec == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f", res.RequestsPerSec/base.RequestsPerSec)
	}
	added := "–"
	if direct, ok := r.result(queuebench.Direct, cl.concurrency); ok && cl.path.name != queuebench.Direct {
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

// knitPairs are the knit-queue process paths with their Knative peer.
var knitPairs = []struct{ knit, knative string }{
	{pathProcKnitCC0, pathProcKnativeCC0},
	{pathProcKnitCC10, pathProcKnativeCC10},
}

// writeSideBySide is knit-queue against Knative's queue-proxy and the
// bare proxy, cell by cell.
func (r *report) writeSideBySide(b *strings.Builder) {
	fmt.Fprintf(b, "\n### knit-queue beside Knative's queue-proxy and the bare proxy\n\n")
	fmt.Fprintf(b, "| c | cc | knit-queue req/s | Knative req/s | knit ÷ Knative | bareproxy req/s | knit ÷ bareproxy | p50 added by knit | p50 added by Knative |\n")
	fmt.Fprintf(b, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, pair := range knitPairs {
		for _, c := range r.opts.concurrency {
			k, okK := r.result(pair.knit, c)
			if !okK {
				continue
			}
			kn, okN := r.result(pair.knative, c)
			bare, okB := r.result(pathProcBare, c)
			direct, okD := r.result(queuebench.Direct, c)
			cols := []string{fmt.Sprint(c), fmt.Sprint(procCC(pair.knit)), fmt.Sprintf("%.0f", k.RequestsPerSec)}
			cols = append(cols, orDash(okN, fmt.Sprintf("%.0f", kn.RequestsPerSec)), orDash(okN, fmt.Sprintf("**%.2f×**", k.RequestsPerSec/kn.RequestsPerSec)))
			cols = append(cols, orDash(okB, fmt.Sprintf("%.0f", bare.RequestsPerSec)), orDash(okB, fmt.Sprintf("**%.2f×**", k.RequestsPerSec/bare.RequestsPerSec)))
			cols = append(cols, orDash(okD, "+"+fmtMs(k.P50-direct.P50)), orDash(okD && okN, "+"+fmtMs(kn.P50-direct.P50)))
			fmt.Fprintf(b, "| %s |\n", strings.Join(cols, " | "))
		}
	}
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

func orDash(ok bool, s string) string {
	if !ok {
		return "–"
	}
	return s
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
			failures = append(failures, fmt.Sprintf("- c%d %s: %d errors; first: %v", cl.concurrency, cl.path.label, cl.result.Errors, cl.result.FirstErr))
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
