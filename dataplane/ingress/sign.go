package ingress

import (
	"net/http"
	"time"

	"github.com/knitops/knit/internal/hopauth"
)

// SignRoutes makes the router sign, with keys, the Revision it routes
// each request to (hopauth.RouteHeader): the activator serves a request
// only with that signature, so a pod calling an activator directly cannot
// name any Revision it likes. Call it before the router serves; without
// it (tests, benchmarks) requests go unsigned and activators that check
// refuse them.
func (r *Router) SignRoutes(keys *hopauth.Keyring) { r.keys = keys }

// signWith gives every backend of t the keys to sign with.
func (t *Table) signWith(keys *hopauth.Keyring) {
	for _, b := range t.revisions {
		b.keys = keys
	}
}

// routeSig is a backend's signature for one Unix second.
type routeSig struct {
	sec   int64
	value []string
}

// sign sets h's route signature for b, replacing whatever a client sent.
func (b *backend) sign(h http.Header) {
	if v := b.signature(); v != nil {
		h[hopauth.RouteHeader] = v
		return
	}
	delete(h, hopauth.RouteHeader)
}

// signature is b's route signature as a header value, nil without keys.
// It is made once a second per Revision, not per request: an HMAC per
// request would cost the ingress more than its routing does.
func (b *backend) signature() []string {
	if b.keys == nil {
		return nil
	}
	now := time.Now()
	s := b.sig.Load()
	if s == nil || s.sec != now.Unix() {
		s = &routeSig{sec: now.Unix(), value: []string{b.keys.SignRoute(b.namespace, b.name, now)}}
		b.sig.Store(s)
	}
	return s.value
}
