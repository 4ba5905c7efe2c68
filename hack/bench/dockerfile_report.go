package main

import (
	"fmt"
	"strings"
	"time"
)

// dockerfileHeading opens the dockerfile:// section of the report.
const dockerfileHeading = "## Push code → serving: dockerfile:// in knit dev\n"

// targetDockerfileWarm is the bound on a code change of a
// dockerfile:// Service with BuildKit's cache warm, push → serving in
// knit dev.
const targetDockerfileWarm = 5 * time.Second

// dockerfileSummary is the medians of the warm runs, each taken on its
// own.
type dockerfileSummary struct{ total, build, push, rollout time.Duration }

func (d *dockerfileResult) warmSummary() dockerfileSummary {
	return dockerfileSummary{
		total:   median(d.warm, func(r dockerfileRun) time.Duration { return r.total }),
		build:   median(d.warm, func(r dockerfileRun) time.Duration { return r.build }),
		push:    median(d.warm, func(r dockerfileRun) time.Duration { return r.push }),
		rollout: median(d.warm, dockerfileRun.rollout),
	}
}

// markdown is the dockerfile:// section of the report.
func (d *dockerfileResult) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n", dockerfileHeading)
	if d.skipped != "" {
		fmt.Fprintf(&b, "Not measured: %s.\n", d.skipped)
		return b.String()
	}
	fmt.Fprintf(&b, "`knit dev --build-mirror docker.io=<mirror>` built from this tree (%s to its banner), state in a\n", d.devStart.Round(100*time.Millisecond))
	fmt.Fprintf(&b, "temporary directory, ports free on 127.0.0.1; the mirror is a registry the bench serves on 127.0.0.1\n")
	fmt.Fprintf(&b, "holding the `python:3.11-slim` `make base-images` built (pushed in %s). The bench copies\n", d.basePush.Round(100*time.Millisecond))
	fmt.Fprintf(&b, "`%s` (a Dockerfile beside `%s`, `image: dockerfile://./`) into a Git repository, pushes it\n", pyApp, pyFile)
	fmt.Fprintf(&b, "to knit dev's Git server and times push → the app's answer through the ingress. Run 1 is the first\n")
	fmt.Fprintf(&b, "push: BuildKit's cache is empty and buildkitd and the build registry start with it. Each further run\n")
	fmt.Fprintf(&b, "changes the greeting in `%s`, commits and pushes it: the base and `WORKDIR` come from the cache.\n", pyFile)
	fmt.Fprintf(&b, "*build* and *push* are the build's record in the GitRepository's `status.builds` (`build=` the whole\n")
	fmt.Fprintf(&b, "build, `push=` BuildKit's export to knit dev's registry, part of it; both to 0.1 s); *rollout* is push → serving\n")
	fmt.Fprintf(&b, "minus the build (Git fetch, render, apply, the new Revision's start, the Route's switch).\n")
	fmt.Fprintf(&b, "Target: a warm code change push → serving < %s in knit dev (median).\n\n", fmtSec(targetDockerfileWarm))
	fmt.Fprintf(&b, "| run | caches | push → serving | build | of it push | rollout |\n")
	fmt.Fprintf(&b, "|---:|---|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| 1 | cold | %s |\n", dockerfileCells(d.cold))
	for i, r := range d.warm {
		fmt.Fprintf(&b, "| %d | warm | %s |\n", i+2, dockerfileCells(r))
	}
	if len(d.warm) > 0 {
		m := d.warmSummary()
		fmt.Fprintf(&b, "| **median, warm** | | **%s** | **%s** | **%s** | **%s** |\n", fmtSec(m.total), fmtSec(m.build), fmtSec(m.push), fmtSec(m.rollout))
	}
	return b.String()
}

func dockerfileCells(r dockerfileRun) string {
	return fmt.Sprintf("%s | %s | %s | %s", fmtSec(r.total), fmtSec(r.build), fmtSec(r.push), fmtSec(r.rollout()))
}

// dockerfileTarget judges the warm code changes' median push → serving.
func (r *report) dockerfileTarget() target {
	t := target{what: fmt.Sprintf("a code change of a dockerfile:// Service, BuildKit's cache warm: push → serving < %s in knit dev (median)", fmtSec(targetDockerfileWarm)), verdict: verdict(false, false)}
	if d := r.dockerfile; d != nil && len(d.warm) > 0 {
		m := d.warmSummary()
		t.measured = fmt.Sprintf("%s (build %s, rollout %s)", fmtSec(m.total), fmtSec(m.build), fmtSec(m.rollout))
		t.verdict = verdict(true, m.total < targetDockerfileWarm)
	}
	return t
}
