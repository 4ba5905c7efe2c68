package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// Targets from DESIGN.md's "Performance targets".
const (
	targetQueueVsBare       = 1.2
	targetQueueAddedP50     = 250 * time.Microsecond
	targetActivatorAddedP50 = 500 * time.Microsecond
	targetColdBeyondApp     = 50 * time.Millisecond
)

// machine is what the numbers were measured on.
type machine struct {
	cpu        string
	cpus       int
	gomaxprocs int
	kernel     string
	goVersion  string
	commit     string
	date       time.Time
}

func readMachine(root string) machine {
	m := machine{
		cpu: "unknown CPU", cpus: runtime.NumCPU(), gomaxprocs: runtime.GOMAXPROCS(0),
		kernel: runtime.GOOS, goVersion: runtime.Version(), date: time.Now().UTC(),
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpu = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = "Linux " + strings.TrimSpace(string(b))
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, _ := cmd.Output()
		return strings.TrimSpace(string(out))
	}
	if m.commit = git("rev-parse", "--short", "HEAD"); m.commit == "" {
		m.commit = "unknown"
	} else if git("status", "--porcelain", "--untracked-files=no") != "" {
		m.commit += " with uncommitted changes"
	}
	return m
}

// report is everything one run measured.
type report struct {
	machine machine
	opts    options
	cells   []cell
	cold    *coldResult
	cluster *clusterResult
	elapsed time.Duration
}

func (r *report) result(name string, c int) (queuebench.Result, bool) {
	for _, cl := range r.cells {
		if cl.path.name == name && cl.concurrency == c {
			return cl.result, cl.result.Requests > 0
		}
	}
	return queuebench.Result{}, false
}

func (r *report) markdown() string {
	var b strings.Builder
	m := r.machine
	o := r.opts
	fmt.Fprintf(&b, "# Benchmarks\n\n")
	fmt.Fprintf(&b, "Written by `make bench` (`hack/bench`); run it again rather than editing this file.\n")
	fmt.Fprintf(&b, "Everything below ran in one run on one machine: the load generator, the app and\n")
	fmt.Fprintf(&b, "every proxy share its CPU, so compare numbers within this page, not across machines.\n\n")
	fmt.Fprintf(&b, "- Machine: %s, %d CPUs, GOMAXPROCS %d, %s\n", m.cpu, m.cpus, m.gomaxprocs, m.kernel)
	fmt.Fprintf(&b, "- Go: %s; commit %s\n", m.goVersion, m.commit)
	fmt.Fprintf(&b, "- Date: %s\n", m.date.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- Whole run: %s\n\n", r.elapsed.Round(time.Second))

	fmt.Fprintf(&b, "## Request path\n\n")
	fmt.Fprintf(&b, "A trivial app (a %d-byte answer with Content-Length) on loopback, reached directly and through\n", len(queuebench.AppBody))
	fmt.Fprintf(&b, "each proxy chain, all in one process. Closed loop: c workers, each on its own kept-alive\n")
	fmt.Fprintf(&b, "HTTP/1.1 connection, send GET back to back for %s per cell (%d interleaved slices, each after a\n", o.duration, o.slices)
	fmt.Fprintf(&b, "%s unmeasured warm-up), at most %d requests per cell. The queue-proxies run every\n", o.warmup, o.maxRequests)
	fmt.Fprintf(&b, "feature (timeouts, stats, Prometheus metrics, probes; the breaker at cc=10); the ingress\n")
	fmt.Fprintf(&b, "router's table is built from a Route and EndpointSlices as the control plane writes them;\n")
	fmt.Fprintf(&b, "the activator has the cc=0 queue-proxy as its one endpoint (`SetEndpoints`, cc=0).\n\n")
	fmt.Fprintf(&b, "| c | path | req/s | p50 | p99 | × direct | × bare proxy | p50 − direct | errors |\n")
	fmt.Fprintf(&b, "|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var failures []string
	for _, cl := range r.cells {
		res := cl.result
		direct, okD := r.result(queuebench.Direct, cl.concurrency)
		bare, okB := r.result(queuebench.ReverseProxy, cl.concurrency)
		ratio := func(ok bool, base queuebench.Result) string {
			if !ok || base.RequestsPerSec == 0 {
				return "–"
			}
			return fmt.Sprintf("%.2f", res.RequestsPerSec/base.RequestsPerSec)
		}
		added := "–"
		if okD && cl.path.name != queuebench.Direct {
			added = fmtMs(res.P50 - direct.P50)
		}
		bound := ""
		if res.Bounded {
			bound = " (count bound)"
		}
		fmt.Fprintf(&b, "| %d | %s | %.0f%s | %s | %s | %s | %s | %s | %d |\n", cl.concurrency, cl.path.label,
			res.RequestsPerSec, bound, fmtMs(res.P50), fmtMs(res.P99), ratio(okD, direct), ratio(okB, bare), added, res.Errors)
		if res.Errors > 0 {
			failures = append(failures, fmt.Sprintf("- c%d %s: %d errors; first: %v", cl.concurrency, cl.path.label, res.Errors, res.FirstErr))
		}
	}
	if len(failures) > 0 {
		fmt.Fprintf(&b, "\nErrors:\n\n%s\n", strings.Join(failures, "\n"))
	}

	if c := r.cold; c != nil {
		fmt.Fprintf(&b, "\n## Cold start\n\n")
		fmt.Fprintf(&b, "`knit dev` built from this tree (%s to build, %s to its banner), state in a temporary\n", c.knitBuild.Round(100*time.Millisecond), c.devStart.Round(100*time.Millisecond))
		fmt.Fprintf(&b, "directory, ports free on 127.0.0.1; `%s` (min-scale 0) with `config-autoscaler`\n", helloManifest)
		fmt.Fprintf(&b, "%s, first answer %s after `kubectl apply` (build included).\n", fmtMap(shortAutoscaler), c.firstUp.Round(100*time.Millisecond))
		fmt.Fprintf(&b, "Each run waits until the Revision is at zero (the autoscaler says 0, no replica process left),\n")
		fmt.Fprintf(&b, "then starts the same helloworld binary alone on a free port and times exec → first byte of\n")
		fmt.Fprintf(&b, "its answer (polled every 200 µs), then sends one request through the ingress and times its\n")
		fmt.Fprintf(&b, "write → first byte (ingress → activator → autoscaler → replica start → probes → answer).\n\n")
		fmt.Fprintf(&b, "| run | app alone: exec → first byte | cold start: request → first byte | cold start − app |\n")
		fmt.Fprintf(&b, "|---:|---:|---:|---:|\n")
		for i, run := range c.runs {
			fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", i+1, fmtColdMs(run.app), fmtColdMs(run.ttfb), fmtColdMs(run.ttfb-run.app))
		}
		app, cold := median(c.runs, func(r coldRun) time.Duration { return r.app }), median(c.runs, func(r coldRun) time.Duration { return r.ttfb })
		fmt.Fprintf(&b, "| **median** | **%s** | **%s** | **%s** |\n", fmtColdMs(app), fmtColdMs(cold), fmtColdMs(cold-app))
	}

	if c := r.cluster; c != nil {
		b.WriteString(c.markdown())
	}

	fmt.Fprintf(&b, "\n## Targets (DESIGN.md, \"Performance targets\")\n\n")
	fmt.Fprintf(&b, "| target | measured | met |\n|---|---|---|\n")
	for _, t := range r.targets() {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.what, t.measured, t.verdict)
	}
	return b.String()
}

// target is one row of the targets table.
type target struct{ what, measured, verdict string }

func verdict(measured bool, met bool) string {
	switch {
	case !measured:
		return "not measured"
	case met:
		return "yes"
	default:
		return "**no**"
	}
}

func (r *report) targets() []target {
	var out []target
	for _, c := range []int{10, 100} {
		bare, okB := r.result(queuebench.ReverseProxy, c)
		var parts []string
		measured, met := okB, okB
		for _, q := range []string{queuebench.QueueCC0, queuebench.QueueCC10} {
			res, ok := r.result(q, c)
			if !ok || !okB {
				measured = false
				continue
			}
			x := res.RequestsPerSec / bare.RequestsPerSec
			parts = append(parts, fmt.Sprintf("%s %.2f×", labels[q], x))
			met = met && x >= targetQueueVsBare && res.Errors == 0
		}
		out = append(out, target{
			what:     fmt.Sprintf("queue-proxy req/s ≥ %.1f × bare reverse proxy at c%d", targetQueueVsBare, c),
			measured: strings.Join(parts, ", "), verdict: verdict(measured, met),
		})
	}
	{
		direct, okD := r.result(queuebench.Direct, 1)
		var parts []string
		measured, met := okD, okD
		for _, q := range []string{queuebench.QueueCC0, queuebench.QueueCC10} {
			res, ok := r.result(q, 1)
			if !ok || !okD {
				measured = false
				continue
			}
			added := res.P50 - direct.P50
			parts = append(parts, fmt.Sprintf("%s +%s", labels[q], fmtMs(added)))
			met = met && added < targetQueueAddedP50
		}
		out = append(out, target{
			what:     fmt.Sprintf("queue-proxy adds < %s at p50 over direct at c1", fmtMs(targetQueueAddedP50)),
			measured: strings.Join(parts, ", "), verdict: verdict(measured, met),
		})
	}
	{
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
		out = append(out, target{
			what:     fmt.Sprintf("activator in path adds < %s at p50 over ingress → queue-proxy (judged at c1)", fmtMs(targetActivatorAddedP50)),
			measured: strings.Join(parts, ", "), verdict: verdict(measured, met),
		})
	}
	{
		t := target{what: fmt.Sprintf("cold start < %s beyond the app's own start (medians)", fmtColdMs(targetColdBeyondApp)), verdict: verdict(false, false)}
		if c := r.cold; c != nil && len(c.runs) > 0 {
			app, cold := median(c.runs, func(r coldRun) time.Duration { return r.app }), median(c.runs, func(r coldRun) time.Duration { return r.ttfb })
			t.measured = fmt.Sprintf("%s − %s = %s", fmtColdMs(cold), fmtColdMs(app), fmtColdMs(cold-app))
			t.verdict = verdict(true, cold-app < targetColdBeyondApp)
		}
		out = append(out, t)
	}
	return out
}

func fmtMs(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
}

func fmtColdMs(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func fmtMap(m map[string]string) string {
	var parts []string
	for _, k := range []string{"stable-window", "scale-to-zero-grace-period"} {
		parts = append(parts, fmt.Sprintf("`%s: %s`", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
