package main

import (
	"fmt"
	"strings"
	"time"
)

// coldSummary is the medians of a Revision's cold-start runs.
type coldSummary struct{ app, runc, ttfb time.Duration }

func summarize(runs []coldRun) coldSummary {
	return coldSummary{
		app:  median(runs, func(r coldRun) time.Duration { return r.app }),
		runc: median(runs, func(r coldRun) time.Duration { return r.runc }),
		ttfb: median(runs, func(r coldRun) time.Duration { return r.ttfb }),
	}
}

// added is what knit adds to the app's own start: the cold start's
// median less the app alone's.
func (s coldSummary) added() time.Duration { return s.ttfb - s.app }

// markdown is the cold-start section of the report: the ko:// Revision
// and, side by side, the image Revision when it was measured.
func (c *coldResult) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Cold start\n\n")
	fmt.Fprintf(&b, "`knit dev` built from this tree (%s to build, %s to its banner), state in a temporary\n", c.knitBuild.Round(100*time.Millisecond), c.devStart.Round(100*time.Millisecond))
	fmt.Fprintf(&b, "directory, ports free on 127.0.0.1; `%s` (min-scale 0) with `config-autoscaler`\n", helloManifest)
	fmt.Fprintf(&b, "%s, first answer %s after `kubectl apply` (build included).\n", fmtMap(shortAutoscaler), c.firstUp.Round(100*time.Millisecond))
	if len(c.image) == 0 {
		c.writeKoOnly(&b)
		return b.String()
	}
	fmt.Fprintf(&b, "Beside it the same app as an image: helloworld built statically (`CGO_ENABLED=0`, `-trimpath`),\n")
	fmt.Fprintf(&b, "packed as ko packs it (`/%s`, user `%s` named in the image's `/etc/passwd`; one layer,\n", appImagePath, appImageUser)
	fmt.Fprintf(&b, "%s), pushed to a registry the bench serves on 127.0.0.1 and deployed as `%s`, the same\n", fmtMiB(uint64(c.imageSize)), imageService)
	fmt.Fprintf(&b, "manifest but for its name and image: first answer %s after `kubectl apply` (pull included).\n", c.imageFirstUp.Round(100*time.Millisecond))
	fmt.Fprintf(&b, "knit dev pulls it once (a tag other than `latest`: IfNotPresent); each cold start mounts an\n")
	fmt.Fprintf(&b, "overlay snapshot of it as a runc bundle's root and runs `runc run` in the replica's network and cgroup.\n\n")
	fmt.Fprintf(&b, "Each run waits until every Revision is at zero (the autoscaler says 0, no replica process and no\n")
	fmt.Fprintf(&b, "container bundle left), then starts the Revision's helloworld binary alone on a free port and times\n")
	fmt.Fprintf(&b, "exec → first byte of its answer (polled every 200 µs); for the image, also the image's files with\n")
	fmt.Fprintf(&b, "runc alone (knit's runtime spec over a plain directory, in the host's network, no cgroup limits),\n")
	fmt.Fprintf(&b, "exec of `runc run` → first byte. Then it sends one request through the ingress and times its\n")
	fmt.Fprintf(&b, "write → first byte (ingress → activator → autoscaler → replica start → probes → answer). The two\n")
	fmt.Fprintf(&b, "Revisions take turns, in alternating order, so a slow moment of the machine hits both.\n\n")
	fmt.Fprintf(&b, "| run | ko://: app alone | ko://: cold start | ko://: cold − app | image: app alone | image: runc alone | image: cold start | image: cold − app |\n")
	fmt.Fprintf(&b, "|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i := range max(len(c.runs), len(c.image)) {
		fmt.Fprintf(&b, "| %d | %s | %s |\n", i+1, koCells(c.runs, i), imageCells(c.image, i))
	}
	ko, img := summarize(c.runs), summarize(c.image)
	fmt.Fprintf(&b, "| **median** | **%s** | **%s** | **%s** | **%s** | **%s** | **%s** | **%s** |\n",
		fmtColdMs(ko.app), fmtColdMs(ko.ttfb), fmtColdMs(ko.added()),
		fmtColdMs(img.app), fmtColdMs(img.runc), fmtColdMs(img.ttfb), fmtColdMs(img.added()))
	fmt.Fprintf(&b, "\nSide by side (medians; added by knit = cold start − app alone):\n\n")
	fmt.Fprintf(&b, "| Revision | app alone | runc alone | cold start: request → first byte | added by knit |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| ko:// (a process of this machine) | %s | – | %s | %s |\n", fmtColdMs(ko.app), fmtColdMs(ko.ttfb), fmtColdMs(ko.added()))
	fmt.Fprintf(&b, "| image (runc over an overlay snapshot) | %s | %s | %s | %s |\n", fmtColdMs(img.app), fmtColdMs(img.runc), fmtColdMs(img.ttfb), fmtColdMs(img.added()))
	fmt.Fprintf(&b, "\nThe image's cold start adds %s to the ko:// one; runc alone takes %s more than the app alone.\n",
		fmtColdMs(img.ttfb-ko.ttfb), fmtColdMs(img.runc-img.app))
	return b.String()
}

// writeKoOnly is the section's table as it was before images ran: the
// ko:// Revision alone, with why the image was not measured.
func (c *coldResult) writeKoOnly(b *strings.Builder) {
	fmt.Fprintf(b, "Each run waits until the Revision is at zero (the autoscaler says 0, no replica process left),\n")
	fmt.Fprintf(b, "then starts the same helloworld binary alone on a free port and times exec → first byte of\n")
	fmt.Fprintf(b, "its answer (polled every 200 µs), then sends one request through the ingress and times its\n")
	fmt.Fprintf(b, "write → first byte (ingress → activator → autoscaler → replica start → probes → answer).\n")
	if c.imageSkipped != "" {
		fmt.Fprintf(b, "The same app as an image was not measured: %s.\n", c.imageSkipped)
	}
	fmt.Fprintf(b, "\n| run | app alone: exec → first byte | cold start: request → first byte | cold start − app |\n")
	fmt.Fprintf(b, "|---:|---:|---:|---:|\n")
	for i := range c.runs {
		fmt.Fprintf(b, "| %d | %s |\n", i+1, koCells(c.runs, i))
	}
	ko := summarize(c.runs)
	fmt.Fprintf(b, "| **median** | **%s** | **%s** | **%s** |\n", fmtColdMs(ko.app), fmtColdMs(ko.ttfb), fmtColdMs(ko.added()))
}

// koCells are run i's app alone, cold start and difference, "–" when
// there is no run i.
func koCells(runs []coldRun, i int) string {
	if i >= len(runs) {
		return "– | – | –"
	}
	r := runs[i]
	return fmt.Sprintf("%s | %s | %s", fmtColdMs(r.app), fmtColdMs(r.ttfb), fmtColdMs(r.ttfb-r.app))
}

// imageCells are koCells with runc alone after the app alone.
func imageCells(runs []coldRun, i int) string {
	if i >= len(runs) {
		return "– | – | – | –"
	}
	r := runs[i]
	return fmt.Sprintf("%s | %s | %s | %s", fmtColdMs(r.app), fmtColdMs(r.runc), fmtColdMs(r.ttfb), fmtColdMs(r.ttfb-r.app))
}
