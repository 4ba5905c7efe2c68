package main

import (
	"fmt"
	"strings"
	"time"
)

// scaleHeading opens the scale part's section of docs/benchmarks.md.
const scaleHeading = "## At scale: a thousand Services in knit dev\n"

// The targets for the scale part (docs/design.md's table).
const (
	targetAllReady = 120 * time.Second
	targetResync   = 60 * time.Second
	targetIdleCore = 0.05
)

// markdown is the scale part's section, with the machine and commit it
// ran on: `make bench-scale` writes it into a page `make bench` wrote.
func (r *scaleResult) markdown(m machine, elapsed time.Duration) string {
	var b strings.Builder
	o := r.opts
	b.WriteString("\n" + scaleHeading + "\n")
	fmt.Fprintf(&b, "Written by `make bench-scale` (`hack/bench -scale`), %s, commit %s, %s, %d CPUs; whole run %s.\n",
		m.date.Format("2006-01-02 15:04 MST"), m.commit, m.cpu, m.cpus, elapsed.Round(time.Second))
	fmt.Fprintf(&b, "`knit dev` built from this tree (banner %s after its start), `config-autoscaler` %s.\n",
		r.devStart.Round(100*time.Millisecond), fmtScaleConfig())
	fmt.Fprintf(&b, "Each Service runs examples/helloworld's app with a `TARGET` of its own (a template, a Revision each) at\n")
	fmt.Fprintf(&b, "`min-scale: 0`. Ready means the Service's Ready condition is True for its current generation, seen\n")
	fmt.Fprintf(&b, "through a watch (a poll every 100 ms of the watch's cache, not of the API server).\n\n")

	fmt.Fprintf(&b, "| step | what | measured |\n|---|---|---:|\n")
	fmt.Fprintf(&b, "| 1 | `kubectl apply -f` of %d Services at `initial-scale: 0`: kubectl itself | %s |\n", o.services, fmtSec(r.applyCmd))
	fmt.Fprintf(&b, "| | apply → first Service Ready | %s |\n", fmtSec(r.apply.first))
	fmt.Fprintf(&b, "| | apply → all %d Ready | **%s** |\n", o.services, fmtSec(r.apply.all))
	fmt.Fprintf(&b, "| 2 | idle, all at zero: CPU of knit dev's processes over %s | %s |\n", o.idle, fmtShare(total(r.idle), o.idle))
	fmt.Fprintf(&b, "| 3 | `kubectl apply -f` of %d more Services at `initial-scale: 1` → all Ready | %s |\n", o.warm, fmtSec(r.warm.ready.all))
	fmt.Fprintf(&b, "| | replica processes at once, at the peak (an app and its knit-queue each) | %d |\n", r.warm.peakReplicas)
	fmt.Fprintf(&b, "| | knit-queue memory at the peak, %d processes: RSS (own anon memory) | %.0f MiB (%.0f MiB), %.1f MiB (%.1f MiB) each |\n",
		r.warm.queues, mib(r.warm.queueMem.rss), mib(r.warm.queueMem.anon), perProc(r.warm.queueMem.rss, r.warm.queues), perProc(r.warm.queueMem.anon, r.warm.queues))
	fmt.Fprintf(&b, "| | the same as PSS (shared pages split among the processes sharing them): what they cost together | %.0f MiB, %.1f MiB each |\n",
		mib(r.warm.queuePSS), perProc(r.warm.queuePSS, r.warm.queues))
	fmt.Fprintf(&b, "| | knit dev's own CPU from apply to all Ready | %s |\n", fmtShare(total(r.warm.controlPlane), r.warm.warmupElapsed))
	fmt.Fprintf(&b, "| | Ready → every replica gone (stable window 6 s, grace 4 s) | %s |\n", fmtSec(r.warm.toZero))
	fmt.Fprintf(&b, "| 4 | restart, %d Services: SIGTERM → knit dev exited | %s |\n", o.services+o.warm, fmtSec(r.stop))
	fmt.Fprintf(&b, "| | start → banner | %s |\n", fmtSec(r.restartBanner))
	fmt.Fprintf(&b, "| | start → full resync (%s) | **%s** |\n", fmtResynced(r.resynced), fmtSec(r.resync))
	fmt.Fprintf(&b, "| 5 | `git push` of a repository of %d Services → all Ready | %s |\n", o.repo, fmtSec(r.firstPush.all))
	fmt.Fprintf(&b, "| | `git push` of a commit changing all %d → all Ready at the new commit | %s |\n", o.repo, fmtSec(r.updatePush.all))

	fmt.Fprintf(&b, "\nIdle, all %d Services at zero, after every controller went idle (step 2): each process of knit dev\n", o.services)
	fmt.Fprintf(&b, "over %s, CPU as a share of one core, memory at the window's end.\n\n", o.idle)
	fmt.Fprintf(&b, "| process | CPU | RSS | anon |\n|---|---:|---:|---:|\n")
	for _, u := range r.idle {
		fmt.Fprintf(&b, "| %s | %s | %.0f MiB | %.0f MiB |\n", u.name, fmtShare(u.cpu, o.idle), mib(u.mem.rss), mib(u.mem.anon))
	}
	all := total(r.idle)
	fmt.Fprintf(&b, "| **all** | **%s** | | |\n", fmtShare(all, o.idle))

	fmt.Fprintf(&b, "\n| target | measured | verdict |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| %d Services Ready < %s after apply | %s | %s |\n", o.services, fmtSec(targetAllReady), fmtSec(r.apply.all), verdict(true, r.apply.all < targetAllReady))
	fmt.Fprintf(&b, "| full resync after a restart < %s | %s | %s |\n", fmtSec(targetResync), fmtSec(r.resync), verdict(true, r.resync < targetResync))
	share := float64(all) / float64(o.idle)
	fmt.Fprintf(&b, "| knit dev idle at %d Services at zero < %.0f%% of a core | %s | %s |\n", o.services, 100*targetIdleCore, fmtShare(all, o.idle), verdict(true, share < targetIdleCore))
	return b.String()
}

func total(usage []procUsage) time.Duration {
	var t time.Duration
	for _, u := range usage {
		t += u.cpu
	}
	return t
}

func fmtShare(cpu, window time.Duration) string {
	if window <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%% of a core", 100*float64(cpu)/float64(window))
}

func perProc(b uint64, n int) float64 {
	if n == 0 {
		return 0
	}
	return mib(b) / float64(n)
}

func fmtScaleConfig() string {
	var parts []string
	for _, k := range sortedKeys(scaleAutoscaler) {
		parts = append(parts, fmt.Sprintf("`%s: %s`", k, scaleAutoscaler[k]))
	}
	return strings.Join(parts, ", ")
}

func fmtResynced(want map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(want) {
		parts = append(parts, fmt.Sprintf("%d %s", want[k], k))
	}
	return "each controller reconciled its objects once and went idle: " + strings.Join(parts, ", ")
}

// spliceSection puts section (a "## " heading and what follows) into the
// page old in place of the section with the same heading, or before
// "## Targets" when old has none, or at its end.
func spliceSection(old, section string) string {
	heading := strings.TrimPrefix(section, "\n")
	heading = heading[:strings.Index(heading, "\n")+1]
	if start := strings.Index(old, "\n"+heading); start >= 0 {
		rest := old[start+1+len(heading):]
		if end := strings.Index(rest, "\n## "); end >= 0 {
			return old[:start] + section + rest[end:]
		}
		return old[:start] + section
	}
	if at := strings.Index(old, "\n## Targets\n"); at >= 0 {
		return old[:at] + section + old[at:]
	}
	return strings.TrimRight(old, "\n") + "\n" + section
}

// carriedScale is the scale section of a page make bench-scale wrote,
// which make bench keeps as it is: the two run apart.
func carriedScale(old string) string {
	start := strings.Index(old, "\n"+scaleHeading)
	if start < 0 {
		return ""
	}
	rest := old[start+1+len(scaleHeading):]
	if end := strings.Index(rest, "\n## "); end >= 0 {
		rest = rest[:end+1]
	}
	return strings.TrimRight(old[start:start+1+len(scaleHeading)]+rest, "\n") + "\n"
}
