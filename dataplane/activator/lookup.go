package activator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/knitops/knit/internal/hopauth"
)

// Headers naming the Revision a request is for, Knative's names; the
// ingress sets them when it routes to the activator.
const (
	RevisionHeader  = "Knative-Serving-Revision"
	NamespaceHeader = "Knative-Serving-Namespace"
)

// ErrUnknownRevision is returned by a lookup of a Revision the activator
// has no state for.
var ErrUnknownRevision = errors.New("unknown revision")

// revisionHandler finds the Revision a request is for from its headers:
// no headers is 404 (the request was not routed to a Revision), headers
// without the ingress's signature of them are 403 when routes is set (the
// request did not come through the ingress), a Revision the activator
// does not know is 502 (the ingress and the activator disagree). The
// signature is removed before the request goes on.
type revisionHandler struct {
	next   http.Handler
	lookup func(ctx context.Context, key types.NamespacedName) (*revision, error)
	routes *hopauth.Keyring
	// verified is the last signature that passed, so that the requests of
	// one busy Revision (the ingress signs once a second) cost one HMAC a
	// second rather than one each.
	verified atomic.Pointer[verifiedRoute]
}

// verifiedRoute is a signature of namespace/name that passed at second
// sec; it is taken again without an HMAC within that second.
type verifiedRoute struct {
	sig, namespace, name string
	sec                  int64
}

// checkRoute says whether sig signs key, by the memo or by the keyring.
func (h *revisionHandler) checkRoute(sig string, key types.NamespacedName) bool {
	now := time.Now()
	if v := h.verified.Load(); v != nil && v.sec == now.Unix() && v.sig == sig && v.namespace == key.Namespace && v.name == key.Name {
		return true
	}
	if h.routes.CheckRoute(sig, key.Namespace, key.Name, now) != nil {
		return false
	}
	h.verified.Store(&verifiedRoute{sig: sig, namespace: key.Namespace, name: key.Name, sec: now.Unix()})
	return true
}

func (h *revisionHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := types.NamespacedName{Namespace: first(r.Header[NamespaceHeader]), Name: first(r.Header[RevisionHeader])}
	if key.Namespace == "" || key.Name == "" {
		http.Error(w, fmt.Sprintf("activator: request names no revision (headers %s and %s)", NamespaceHeader, RevisionHeader), http.StatusNotFound)
		return
	}
	if h.routes != nil {
		sig := first(r.Header[hopauth.RouteHeader])
		delete(r.Header, hopauth.RouteHeader)
		if !h.checkRoute(sig, key) {
			http.Error(w, "activator: only knit's ingress routes requests here", http.StatusForbidden)
			return
		}
	}
	rev, err := h.lookup(r.Context(), key)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	h.next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), stateKey{}, &requestState{rev: rev})))
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// requestState is what the handlers below the lookup share about one
// request: its Revision and, once the throttler granted one, the
// endpoint it holds (the proxy swaps it when a retry moves the request).
type requestState struct {
	rev *revision
	ep  *endpoint
}

type stateKey struct{}

func stateOf(ctx context.Context) *requestState {
	return ctx.Value(stateKey{}).(*requestState)
}
