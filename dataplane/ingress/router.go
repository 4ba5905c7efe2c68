package ingress

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httputil"
	"sync/atomic"

	"github.com/knitops/knit/dataplane/forward"
)

// Router is the ingress handler. Its table is swapped whole by Update.
type Router struct {
	table atomic.Pointer[Table]
	proxy *httputil.ReverseProxy
}

// NewRouter returns a router with an empty table: every host is unknown
// until the first Update.
func NewRouter() *Router {
	r := &Router{}
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
	r.table.Store(t)
}

type backendKey struct{}

// ServeHTTP routes by Host: unknown → 404, no endpoints → 503, else the
// picked Revision's next endpoint.
func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	e := r.table.Load().lookup(req.Host)
	if e == nil {
		http.Error(w, fmt.Sprintf("knit: no route for host %q", req.Host), http.StatusNotFound)
		return
	}
	b := e.pick()
	if b == nil {
		http.Error(w, fmt.Sprintf("knit: route %s has no revision with traffic", e.route), http.StatusServiceUnavailable)
		return
	}
	req = req.WithContext(context.WithValue(req.Context(), backendKey{}, b))
	req.URL.Scheme = "http"
	r.proxy.ServeHTTP(w, req)
}

// Headers naming the Revision a request was routed to, Knative's names:
// the activator reads them to know which Revision to buffer for.
const (
	RevisionHeader  = "Knative-Serving-Revision"
	NamespaceHeader = "Knative-Serving-Namespace"
)

func rewrite(pr *httputil.ProxyRequest) {
	pr.SetXForwarded()
	pr.Out.Host = pr.In.Host
	if b, ok := pr.In.Context().Value(backendKey{}).(*backend); ok {
		pr.Out.Header[RevisionHeader] = []string{b.name}
		pr.Out.Header[NamespaceHeader] = []string{b.namespace}
	}
}

func proxyError(w http.ResponseWriter, req *http.Request, err error) {
	rev := "?"
	if b, ok := req.Context().Value(backendKey{}).(*backend); ok {
		rev = b.revision
	}
	http.Error(w, fmt.Sprintf("knit: revision %s unreachable: %v", rev, err), http.StatusBadGateway)
}
