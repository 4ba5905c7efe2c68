package ingress

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/knitops/knit/dataplane/forward"
	"github.com/knitops/knit/dataplane/h1proxy"
)

// fastPathable reports whether req takes the fast path (h1proxy): a
// GET or HEAD without a body or an upgrade, that came as HTTP/1.x or as
// HTTP/2 only because TLS offered it (negotiatedH2), so it goes to the
// Revision as HTTP/1.1 either way. h2c and gRPC stay HTTP/2 end to end
// on the slow path, as do bodies, upgrades and everything else.
func (r *Router) fastPathable(req *http.Request) bool {
	if r.noFastPath || (req.ProtoMajor != 1 && !negotiatedH2(req)) {
		return false
	}
	return h1proxy.Bodiless(req)
}

// forwardFast is the fast path: the retries of retryTransport (an
// endpoint that refused the connection, or none known yet) around one
// exchange on a pooled connection to the endpoint, and errors answered
// as the slow path answers them.
func (r *Router) forwardFast(w http.ResponseWriter, req *http.Request, tg *target) {
	ctx := req.Context()
	var lastErr error
	for _, wait := range retryBackoff {
		if err := forward.Pause(ctx, wait); err != nil {
			unreachable(w, tg.revision, err)
			return
		}
		addr := r.endpoint(tg)
		if addr == "" {
			lastErr = fmt.Errorf("%w for revision %s", errNoEndpoints, tg.revision)
			continue
		}
		err := r.exchange(w, req, tg, r.upstreams.pool(addr))
		if err == nil {
			return
		}
		if !forward.Refused(err) {
			unreachable(w, tg.revision, err)
			return
		}
		lastErr = err
	}
	unreachable(w, tg.revision, lastErr)
}

// endpoint is where the next attempt for tg goes, as retryTransport
// picks it: the Revision's endpoints in the current table, else those
// of the table it was routed by; "" when neither knows one.
func (r *Router) endpoint(tg *target) string {
	if b := r.table.Load().revisions[tg.revision]; b != nil {
		if addr := b.addr(); addr != "" {
			return addr
		}
	}
	return tg.addr()
}

// exchange sends req on a connection from p and relays the answer. It
// goes again on a new connection when a reused one failed before any
// answer (the endpoint closed it as the request went out), as
// http.Transport retries a replayable request. A non-nil error means
// nothing was written to w: a refused dial, which the caller may retry
// elsewhere, or a failure it answers.
func (r *Router) exchange(w http.ResponseWriter, req *http.Request, tg *target, p *h1proxy.Pool) error {
	ctx := req.Context()
	for {
		c, err := p.Get(ctx)
		if err != nil {
			return err
		}
		// The client gone ends the exchange, as http.Transport cancels.
		stop := context.AfterFunc(ctx, c.AbortFunc())
		writeEdgeHead(c.Head(), req, tg)
		res, answered, err := c.RoundTrip(w, req)
		if err != nil {
			stop()
			c.Close()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !c.Reused() || answered {
				return err
			}
			continue
		}
		return finish(w, req, res, c, p, stop)
	}
}

// finish relays the answer and hands c back to p if the whole answer
// came through, nothing followed it and the client did not go away; a
// relay cut short (a panic, as ReverseProxy cuts it) closes c too.
func finish(w http.ResponseWriter, req *http.Request, res *http.Response, c *h1proxy.Conn, p *h1proxy.Pool, stop func() bool) (err error) {
	reusable := false
	defer func() {
		if stop() && reusable {
			p.Put(c)
		} else {
			c.Close()
		}
	}()
	reusable, err = c.Relay(w, req, res, readFailed)
	return err
}

// readFailed logs an answer cut short, as ReverseProxy's default log does.
func readFailed(err error) {
	slog.Warn("Reading a revision's answer failed", "err", err)
}

// writeEdgeHead writes, for a request fastPathable accepted, the head
// the slow path sends: what httputil.ReverseProxy with rewrite makes of
// req and http.Transport writes. So:
//
//   - the request line with req's method and URI, HTTP/1.1, req's Host;
//   - the client's first non-empty User-Agent, unless Connection names it;
//   - every other header of the client's but the hop-by-hop ones (those
//     named in Connection too), the forwarding headers, knit's internal
//     headers and their underscore spellings (forward.EdgeStrips), what
//     the transport writes itself, and the target's own header;
//   - Te: trailers if the client accepts trailers;
//   - the edge's view of the client (forward.SetEdge's rules);
//   - the Revision, its namespace, the target's header and the route
//     signature.
//
// Header order differs (http.Transport sorts); nothing may depend on it.
func writeEdgeHead(bw *bufio.Writer, req *http.Request, tg *target) {
	h1proxy.WriteRequestLine(bw, req)
	h := req.Header
	connection := h["Connection"]
	if len(connection) == 0 || !h1proxy.NamedIn(connection, "User-Agent") {
		h1proxy.WriteUserAgent(bw, h)
	}
	for k, vv := range h {
		if edgeDrops(k, tg.header) || (len(connection) > 0 && h1proxy.NamedIn(connection, k)) {
			continue
		}
		for _, v := range vv {
			h1proxy.WriteHeaderLine(bw, k, v)
		}
	}
	h1proxy.WriteTE(bw, h)
	writeEdgeForwarding(bw, req)
	h1proxy.WriteHeaderLine(bw, RevisionHeader, tg.name)
	h1proxy.WriteHeaderLine(bw, NamespaceHeader, tg.namespace)
	if tg.header != "" {
		for _, v := range tg.value {
			h1proxy.WriteHeaderLine(bw, tg.header, v)
		}
	}
	for _, v := range tg.signature() {
		h1proxy.WriteHeaderLine(bw, routeSignatureHeader, v)
	}
	bw.WriteString("\r\n")
}

// routeSignatureHeader is where the route signature goes (sign.go).
const routeSignatureHeader = forward.RouteSignatureHeader

// edgeDrops reports whether the client's header k never reaches the
// Revision as it came; tagHeader is the target's own ("" for none).
func edgeDrops(k, tagHeader string) bool {
	return h1proxy.TransportWrites(k) || forward.IsHopByHop(k) || forward.IsForwarding(k) ||
		forward.EdgeStrips(k) || (tagHeader != "" && k == tagHeader)
}

// writeEdgeForwarding writes forward.SetEdge's headers: X-Forwarded-For
// the client's address alone, X-Forwarded-Host its Host,
// X-Forwarded-Proto its scheme, and one Forwarded element with the three.
func writeEdgeForwarding(bw *bufio.Writer, req *http.Request) {
	proto := "http"
	if req.TLS != nil {
		proto = "https"
	}
	if clientIP, _, err := net.SplitHostPort(req.RemoteAddr); err == nil && clientIP != "" {
		h1proxy.WriteHeaderLine(bw, "X-Forwarded-For", clientIP)
	}
	h1proxy.WriteHeaderLine(bw, "X-Forwarded-Host", req.Host)
	h1proxy.WriteHeaderLine(bw, "X-Forwarded-Proto", proto)
	h1proxy.WriteHeaderLine(bw, "Forwarded", forward.ForwardedElement(req, proto))
}
