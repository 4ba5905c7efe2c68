package activator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
		if h.routes.CheckRoute(sig, key.Namespace, key.Name, time.Now()) != nil {
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
