package acmetest

import (
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/knitops/knit/internal/acme"
)

// challengePath is where HTTP-01 responses live (RFC 8555 §8.3).
const challengePath = "/.well-known/acme-challenge/"

// Responder is an HTTP-01 solver for tests, an acme.Solver and an
// http.Handler at once: Present and CleanUp keep key authorizations in
// memory, and ServeHTTP answers challengePath+<token> for the host the
// request names, as knit's ingress does. Serve it on Pebble.HTTP01.
type Responder struct {
	// Answer, when set, is what ServeHTTP answers in place of the key
	// authorization: a response the CA must refuse.
	Answer string

	mu        sync.Mutex
	live      map[challenge]string
	presented []challenge
}

var _ acme.Solver = (*Responder)(nil)

type challenge struct{ Host, Token string }

// Present publishes keyAuthorization for host and token.
func (r *Responder) Present(_ context.Context, host, token, keyAuthorization string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil {
		r.live = map[challenge]string{}
	}
	c := challenge{host, token}
	r.live[c] = keyAuthorization
	r.presented = append(r.presented, c)
	return nil
}

// CleanUp withdraws what Present published.
func (r *Responder) CleanUp(_ context.Context, host, token string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.live, challenge{host, token})
	return nil
}

// Presented is the hosts Present was called for, in order.
func (r *Responder) Presented() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	hosts := make([]string, len(r.presented))
	for i, c := range r.presented {
		hosts[i] = c.Host
	}
	return hosts
}

// Live is the hosts whose responses are published still: presented and
// not cleaned up.
func (r *Responder) Live() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var hosts []string
	for c := range r.live {
		hosts = append(hosts, c.Host)
	}
	slices.Sort(hosts)
	return hosts
}

// ServeHTTP answers an HTTP-01 validation: the key authorization
// published for the request's host and token, or 404.
func (r *Responder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	token, ok := strings.CutPrefix(req.URL.Path, challengePath)
	if !ok {
		http.NotFound(w, req)
		return
	}
	host := req.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	r.mu.Lock()
	keyAuth, ok := r.live[challenge{strings.ToLower(host), token}]
	r.mu.Unlock()
	if !ok {
		http.NotFound(w, req)
		return
	}
	if r.Answer != "" {
		keyAuth = r.Answer
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, keyAuth)
}
