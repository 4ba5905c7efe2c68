package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// edgeHeading opens the edge section of the report.
const edgeHeading = "## The edge: knit's ingress beside nginx"

// cell is the cell of proxy at proto, shape and c; ok is false when it
// was not measured or served nothing.
func (e *edgeResult) cell(proto edgeProtocol, shape queuebench.Shape, c int, proxy string) (edgeCell, bool) {
	for _, cl := range e.cells {
		if cl.proto == proto && cl.shape == shape && cl.c == c && cl.proxy == proxy {
			return cl, cl.result.Requests > 0
		}
	}
	return edgeCell{}, false
}

func (e *edgeResult) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n\n", edgeHeading)
	m := e.machine
	if !m.date.IsZero() {
		fmt.Fprintf(&b, "Written by `go run ./hack/bench -only edge` (or `make bench`), %s, commit %s, %s, %d CPUs; the part took %s.\n",
			m.date.Format("2006-01-02 15:04 MST"), m.commit, m.cpu, m.cpus, e.elapsed.Round(time.Second))
	}
	fmt.Fprintf(&b, "The edge proxies, each a process of its own, in front of one knit-queue (cc=0, a process) in front of\n")
	fmt.Fprintf(&b, "the bench's app, all on loopback: knit's ingress (`hack/bench/edgeproxy`: the Router `knit ingress` runs,\n")
	fmt.Fprintf(&b, "served as it serves it, signing routes), the same with its HTTP/1 fast path off, and ")
	if e.nginx != "" {
		fmt.Fprintf(&b, "%s (Debian's) as a\n", e.nginx)
	} else {
		fmt.Fprintf(&b, "nginx — **not measured: %s** — as a\n", e.nginxSkip)
	}
	fmt.Fprintf(&b, "Host-routing reverse proxy in its best configuration (a worker per CPU, access log off, `keepalive`\n")
	fmt.Fprintf(&b, "upstream connections with `proxy_http_version 1.1` and `Connection \"\"`, the forwarding headers knit sets,\n")
	fmt.Fprintf(&b, "a 404 default server). Both serve one ECDSA P-256 certificate and are pinned to X25519; h2 is offered by ALPN.\n")
	fmt.Fprintf(&b, "Closed loop, each worker on its own kept-alive connection (HTTP/1.1 plain, HTTP/1.1 over TLS, or h2 over TLS\n")
	fmt.Fprintf(&b, "with one stream at a time, net/http's client), %s per cell in %d slices the proxies take turns at. CPU is the\n", e.duration, e.slices)
	fmt.Fprintf(&b, "proxy's processes' (nginx's master and workers) over the measured requests; the knit-queue and app behind\n")
	fmt.Fprintf(&b, "are the same for every row. Ratios are knit/nginx: ≥ 1.00 in req/s is the target, lower is better for\n")
	fmt.Fprintf(&b, "latency and CPU.\n\n")
	fmt.Fprintf(&b, "| protocol | shape | c | knit req/s | nginx req/s | **req/s knit/nginx** | fast path off/nginx | p50 knit/nginx | p99 knit/nginx | CPU/req knit/nginx | knit CPU/req | errors | verdict |\n")
	fmt.Fprintf(&b, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, proto := range edgeProtocols {
		for _, shape := range queuebench.EdgeShapes() {
			for _, c := range e.conc {
				e.writeRow(&b, proto, shape, c)
			}
		}
	}
	e.writeHandshakes(&b)
	return b.String()
}

// writeRow writes one protocol, shape and concurrency.
func (e *edgeResult) writeRow(b *strings.Builder, proto edgeProtocol, shape queuebench.Shape, c int) {
	knit, ok := e.cell(proto, shape, c, edgeKnit)
	if !ok {
		return
	}
	off, offOK := e.cell(proto, shape, c, edgeKnitNoFast)
	ngx, ngxOK := e.cell(proto, shape, c, edgeNginx)
	errs := knit.result.Errors + off.result.Errors + ngx.result.Errors
	knitCPU := perRequest(knit.cpu, knit.result.Requests)
	if !ngxOK {
		fmt.Fprintf(b, "| %s | %s | %d | %.0f | – | n/a | n/a | n/a | n/a | n/a | %s | %d | nginx not measured |\n",
			proto, shape.Label(), c, knit.result.RequestsPerSec, fmtUs(knitCPU), errs)
		return
	}
	ratio := knit.result.RequestsPerSec / ngx.result.RequestsPerSec
	offRatio := "–"
	if offOK {
		offRatio = fmt.Sprintf("%.2f", off.result.RequestsPerSec/ngx.result.RequestsPerSec)
	}
	verdict := "target met"
	if ratio < 1 {
		verdict = "**target not met**"
	}
	fmt.Fprintf(b, "| %s | %s | %d | %.0f | %.0f | **%.2f** | %s | %s | %s | %s | %s | %d | %s |\n",
		proto, shape.Label(), c, knit.result.RequestsPerSec, ngx.result.RequestsPerSec, ratio, offRatio,
		durRatio(knit.result.P50, ngx.result.P50), durRatio(knit.result.P99, ngx.result.P99),
		durRatio(knitCPU, perRequest(ngx.cpu, ngx.result.Requests)), fmtUs(knitCPU), errs, verdict)
}

// writeHandshakes writes the new-connection table.
func (e *edgeResult) writeHandshakes(b *strings.Builder) {
	if len(e.handshakes) == 0 {
		return
	}
	fmt.Fprintf(b, "\nNew connections, one at a time: TCP connect, a full TLS 1.3 handshake (X25519, no resumption), a GET and\n")
	fmt.Fprintf(b, "its answer's first byte, at most %d per proxy in %s.\n\n", edgeHandshakes, edgeHandshakeTime)
	fmt.Fprintf(b, "| proxy | connections | p50 | p99 | CPU per connection | errors |\n|---|---:|---:|---:|---:|---:|\n")
	byName := map[string]handshakes{}
	for _, h := range e.handshakes {
		byName[h.proxy] = h
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %d |\n", e.labels[h.proxy], h.n, fmtMs(h.p50), fmtMs(h.p99), fmtUs(perRequest(h.cpu, h.n)), h.errs)
	}
	k, n := byName[edgeKnit], byName[edgeNginx]
	if k.n > 0 && n.n > 0 {
		fmt.Fprintf(b, "| **knit/nginx** | | **%s** | **%s** | **%s** | |\n", durRatio(k.p50, n.p50), durRatio(k.p99, n.p99),
			durRatio(perRequest(k.cpu, k.n), perRequest(n.cpu, n.n)))
	}
}

// durRatio is a/b, or "–" when b is 0.
func durRatio(a, b time.Duration) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

func fmtUs(d time.Duration) string {
	return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
}
