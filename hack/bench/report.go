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
	request *requestPath
	cold    *coldResult
	// dockerfile is nil when the part was not run (-dockerfile-runs 0).
	dockerfile *dockerfileResult
	pull       *pullResult
	cluster    *clusterResult
	// carriedCluster is a previous report's cluster section, kept when
	// this run skipped the cluster part.
	carriedCluster string
	// carriedScale is make bench-scale's section of the page, kept as
	// it is.
	carriedScale string
	// edge is nil when the edge part was not run; carriedEdge is then
	// the last run's section, kept as it is.
	edge        *edgeResult
	carriedEdge string
	elapsed     time.Duration
}

// result is the GET cell of the path named name at concurrency c; ok is
// false when it was not measured or served nothing.
func (r *report) result(name string, c int) (res queuebench.Result, ok bool) {
	return r.resultOf(queuebench.ShapeGet, name, c)
}

// resultOf is result for the request shape shape.
func (r *report) resultOf(shape queuebench.Shape, name string, c int) (res queuebench.Result, ok bool) {
	for _, cl := range r.request.cells {
		if cl.shape == shape && cl.path.name == name && cl.concurrency == c {
			return cl.result, cl.result.Requests > 0
		}
	}
	return queuebench.Result{}, false
}

func (r *report) markdown() string {
	var b strings.Builder
	m := r.machine
	fmt.Fprintf(&b, "# Benchmarks\n\n")
	fmt.Fprintf(&b, "Written by `make bench` (`hack/bench`); run it again rather than editing this file.\n")
	fmt.Fprintf(&b, "Everything below ran in one run on one machine: the load generator, the app and\n")
	fmt.Fprintf(&b, "every proxy share its CPU, so compare numbers within this page, not across machines.\n\n")
	fmt.Fprintf(&b, "- Machine: %s, %d CPUs, GOMAXPROCS %d, %s\n", m.cpu, m.cpus, m.gomaxprocs, m.kernel)
	fmt.Fprintf(&b, "- Go: %s; commit %s\n", m.goVersion, m.commit)
	fmt.Fprintf(&b, "- Date: %s\n", m.date.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- Whole run: %s\n", r.elapsed.Round(time.Second))

	r.writeRequestPath(&b)

	if e := r.edge; e != nil {
		b.WriteString(e.markdown())
	} else {
		b.WriteString(r.carriedEdge)
	}

	if c := r.cold; c != nil {
		b.WriteString(c.markdown())
	}
	if d := r.dockerfile; d != nil {
		b.WriteString(d.markdown())
	}
	if p := r.pull; p != nil {
		b.WriteString(p.markdown())
	}

	if c := r.cluster; c != nil {
		b.WriteString(c.markdown())
	} else {
		b.WriteString(r.carriedCluster)
	}

	b.WriteString(r.carriedScale)

	fmt.Fprintf(&b, "\n## Targets\n\n")
	fmt.Fprintf(&b, "From docs/design.md. The queue-proxy's throughput against Knative's and its added latency\n")
	fmt.Fprintf(&b, "are judged on every request shape, on the knit-queue rows as shipped (fast path on).\n\n")
	fmt.Fprintf(&b, "| target | measured | verdict |\n|---|---|---|\n")
	for _, t := range r.targets() {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.what, t.measured, t.verdict)
	}
	return b.String()
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
