package ingress

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httputil"
	"sync"
	"sync/atomic"

	"github.com/knitops/knit/dataplane/forward"
	"github.com/knitops/knit/internal/hopauth"
)

// Router is the ingress handler. Its table is swapped whole by Update.
type Router struct {
	table atomic.Pointer[Table]
	proxy *httputil.ReverseProxy
	// loaded is closed by the first Update. Until then the table is empty
	// because nothing has been read yet, not because no Route exists, so a
	// request waits for it instead of getting a 404 (a restart of knit dev
	// or of an ingress replica would otherwise answer 404 for every host
	// until its cache synced).
	loaded     chan struct{}
	loadedOnce sync.Once
	// keys sign each request's Revision for the activator (sign.go).
	keys *hopauth.Keyring
	// tls is how HTTPS is served (https.go); zero until ServeTLS.
	tls tlsSettings
	// upstreams are the fast path's connections (h1fast.go), unless
	// noFastPath sends every request through proxy.
	upstreams  upstreams
	noFastPath bool
}

// NewRouter returns a router with an empty table, holding every request
// until the first Update.
func NewRouter() *Router {
	r := &Router{loaded: make(chan struct{})}
	r.table.Store(&Table{hosts: map[string]*entry{}, revisions: map[string]*backend{}})
	r.proxy = &httputil.ReverseProxy{
		Rewrite:      rewrite,
		Transport:    &retryTransport{next: forward.NewTransport(1000, 100), table: &r.table},
		ErrorHandler: proxyError,
		BufferPool:   forward.BufferPool{},
	}
	return r
}

// Update installs a new table; requests already routed finish on the old.
// Hosts whose split did not change keep their place in the pick cycle, so
// a table rebuilt for an unrelated reason (a replica added elsewhere)
// keeps every split exact.
func (r *Router) Update(t *Table) {
	t.inherit(r.table.Load())
	t.signWith(r.keys)
	r.table.Store(t)
	r.upstreams.keepOnly(t)
	r.loadedOnce.Do(func() { close(r.loaded) })
}

// DisableFastPath sends every request through httputil.ReverseProxy,
// the path bodies and upgrades take: to measure what the fast path
// (h1fast.go) buys, and a way back should it ever misbehave. Call it
// before the router serves.
func (r *Router) DisableFastPath() {
	r.noFastPath = true
	r.upstreams.closeIdle()
}

// Loaded is closed once the router has its first table: from then on it
// answers every host as the Routes say.
func (r *Router) Loaded() <-chan struct{} { return r.loaded }

// targetKey holds, in a routed request's context, the *target it was
// routed to.
type targetKey struct{}

// ServeHTTP routes by Host (and, with tag-header routing on, by
// TagHeader: Table.route): unknown → 404, no endpoints → 503, else the
// picked Revision's next endpoint. Before the first table it waits for it
// (503 if the client gives up first).
func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if !r.await(w, req) {
		return
	}
	t := r.table.Load()
	if req.TLS == nil && t.challenges != nil && isACMEChallenge(req.URL.Path) && t.answerChallenge(w, req) {
		return
	}
	e := t.route(req)
	if e != nil && e.redirect && req.TLS == nil && !isACMEChallenge(req.URL.Path) {
		r.redirectToHTTPS(w, req)
		return
	}
	r.forward(w, req, e)
}

// Internal is the router as the cluster's own callers reach it (the
// internal listener, behind Routes' placeholder Services): every Route's
// in-cluster names and cluster-local Routes besides the public hosts,
// over plain HTTP without redirects. It must never face the Internet:
// cluster-local means exactly that.
func (r *Router) Internal() http.Handler { return internalRouter{r} }

type internalRouter struct{ r *Router }

func (i internalRouter) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if !i.r.await(w, req) {
		return
	}
	i.r.forward(w, req, i.r.table.Load().routeInternal(req))
}

// await holds a request until the first table, and says whether it may
// go on (503 if the client gave up first).
func (r *Router) await(w http.ResponseWriter, req *http.Request) bool {
	select {
	case <-r.loaded:
		return true
	default:
		select {
		case <-r.loaded:
		case <-req.Context().Done():
			http.Error(w, "knit: the ingress has not read its routes yet", http.StatusServiceUnavailable)
			return false
		}
	}
	return true
}

// forward proxies req to the next endpoint of e's pick: unknown host →
// 404, no Revision with traffic → 503.
func (r *Router) forward(w http.ResponseWriter, req *http.Request, e *entry) {
	if e == nil {
		http.Error(w, fmt.Sprintf("knit: no route for host %q", req.Host), http.StatusNotFound)
		return
	}
	tg := e.pick()
	if tg == nil {
		http.Error(w, fmt.Sprintf("knit: route %s has no revision with traffic", e.route), http.StatusServiceUnavailable)
		return
	}
	if r.fastPathable(req) {
		r.forwardFast(w, req, tg)
		return
	}
	req = req.WithContext(context.WithValue(req.Context(), targetKey{}, tg))
	req.URL.Scheme = "http"
	r.proxy.ServeHTTP(w, req)
}

// Headers naming the Revision a request was routed to, Knative's names:
// the activator reads them to know which Revision to buffer for.
const (
	RevisionHeader  = forward.RevisionHeader
	NamespaceHeader = forward.NamespaceHeader
)

// rewrite applies the edge's forwarding rules (forward.SetEdge: a
// client's internal headers dropped, the forwarding headers this hop's
// view) and then names the Revision for the hops behind, and sets the
// header of the way the request came (DefaultRouteHeader, TagHeader),
// replacing a client's, as Knative's ingresses set their appended
// headers.
func rewrite(pr *httputil.ProxyRequest) {
	forward.SetEdge(pr.Out, pr.In)
	if negotiatedH2(pr.In) {
		asHTTP1(pr.Out)
	}
	if tg, ok := pr.In.Context().Value(targetKey{}).(*target); ok {
		pr.Out.Header[RevisionHeader] = []string{tg.name}
		pr.Out.Header[NamespaceHeader] = []string{tg.namespace}
		if tg.header != "" {
			pr.Out.Header[tg.header] = tg.value
		}
		tg.sign(pr.Out.Header)
	}
}

// proxyError answers a request the slow path could not forward.
func proxyError(w http.ResponseWriter, req *http.Request, err error) {
	rev := "?"
	if tg, ok := req.Context().Value(targetKey{}).(*target); ok {
		rev = tg.revision
	}
	unreachable(w, rev, err)
}

// unreachable answers 502 for a request to revision rev that failed.
func unreachable(w http.ResponseWriter, rev string, err error) {
	http.Error(w, fmt.Sprintf("knit: revision %s unreachable: %v", rev, err), http.StatusBadGateway)
}
