package main

import (
	"fmt"
	"strings"
	"time"
)

// pullHeading opens the pull section of the report.
const pullHeading = "## Image pull\n"

// summary is the medians of the pull runs.
func (p *pullResult) summary() pullRun {
	return pullRun{
		knit:     median(p.runs, func(r pullRun) time.Duration { return r.knit }),
		craneTar: median(p.runs, func(r pullRun) time.Duration { return r.craneTar }),
		craneOCI: median(p.runs, func(r pullRun) time.Duration { return r.craneOCI }),
	}
}

// mibPerSec is the compressed layers moved per second in d.
func (p *pullResult) mibPerSec(d time.Duration) string {
	if d <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f MiB/s", float64(p.compressed)/(1<<20)/d.Seconds())
}

// markdown is the pull section of the report.
func (p *pullResult) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n", pullHeading)
	if p.skipped != "" || len(p.runs) == 0 {
		fmt.Fprintf(&b, "Not measured: %s.\n", or(p.skipped, "no runs"))
		return b.String()
	}
	fmt.Fprintf(&b, "A first pull of an image of %d layers, each %d files of %s of seeded random bytes: incompressible,\n", p.layers, pullFiles, fmtMiB(pullFileSize))
	fmt.Fprintf(&b, "%s compressed (gzip), %s as tar streams. The bench serves it on 127.0.0.1 from\n", fmtMiB(uint64(p.compressed)), fmtMiB(uint64(p.uncompressed)))
	fmt.Fprintf(&b, "go-containerregistry's in-memory registry in its own process (pushed in %s). Each run pulls it\n", p.push.Round(100*time.Millisecond))
	fmt.Fprintf(&b, "once with each puller, in rotating order, into a fresh directory over a fresh HTTP transport: knit's\n")
	fmt.Fprintf(&b, "image store (`local/images`: a new store, `Store.Pull` with `PullAlways`: download, gunzip, digest\n")
	fmt.Fprintf(&b, "checks and unpack into containerd's overlay snapshots, what a Revision's first replica waits for),\n")
	fmt.Fprintf(&b, "and crane to a tarball (`crane pull`) and to an OCI layout (`crane pull --format oci`). crane writes\n")
	fmt.Fprintf(&b, "the compressed blobs as they come and unpacks nothing; knit's pull unpacks every file. crane runs in\n")
	fmt.Fprintf(&b, "the bench's process through `pkg/crane`, as its pull command does (`cmd/crane` needs cobra, which\n")
	fmt.Fprintf(&b, "knit's go.sum lacks), with its default options. Random layers cost next to nothing to gunzip; a real\n")
	fmt.Fprintf(&b, "image's compressed layers cost knit's pull more per byte moved.\n\n")
	fmt.Fprintf(&b, "| run | knit store: pull + unpack | crane pull (tarball) | crane pull --format oci |\n")
	fmt.Fprintf(&b, "|---:|---:|---:|---:|\n")
	for i, r := range p.runs {
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", i+1, fmtColdMs(r.knit), fmtColdMs(r.craneTar), fmtColdMs(r.craneOCI))
	}
	m := p.summary()
	fmt.Fprintf(&b, "| **median** | **%s** | **%s** | **%s** |\n", fmtColdMs(m.knit), fmtColdMs(m.craneTar), fmtColdMs(m.craneOCI))
	fmt.Fprintf(&b, "| compressed layers moved | %s | %s | %s |\n", p.mibPerSec(m.knit), p.mibPerSec(m.craneTar), p.mibPerSec(m.craneOCI))
	fmt.Fprintf(&b, "| left on disk (bytes in files) | %s | %s | %s |\n", fmtMiB(uint64(p.disk.knit)), fmtMiB(uint64(p.disk.craneTar)), fmtMiB(uint64(p.disk.craneOCI)))
	if m.craneTar > 0 {
		fmt.Fprintf(&b, "\nAt the medians knit's pull and unpack takes %.2f× crane's pull to a tarball.\n", float64(m.knit)/float64(m.craneTar))
	}
	return b.String()
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
