package gitserver

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
)

// errNoToken refuses to run with an empty token: every request would
// compare equal to an empty password.
var errNoToken = errors.New("git server: the token is empty")

// admit checks a request's Host header and credential before anything
// else looks at it, and answers the refused ones: 421 for a host the
// server does not serve, 401 with a Basic challenge (git then asks its
// credential helpers, or uses the password in its URL) for a missing or
// wrong token. A refused request learns nothing about the repositories,
// not even whether a name is valid.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) bool {
	if !s.hostAllowed(r.Host) {
		http.Error(w, fmt.Sprintf("knit's Git server does not answer for host %q: reach it by one of its names (%s)",
			r.Host, strings.Join(s.hosts, ", ")), http.StatusMisdirectedRequest)
		return false
	}
	ok, err := s.authenticated(r)
	if err != nil {
		s.opts.Log.Error(err, "Cannot read the Git server's token; refusing every request")
		http.Error(w, "the git server cannot check credentials", http.StatusServiceUnavailable)
		return false
	}
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="knit", charset="UTF-8"`)
		http.Error(w, "authentication required: use knit's Git token as the password (any user name)", http.StatusUnauthorized)
		return false
	}
	return true
}

// hostAllowed reports whether host (a Host header, with or without a
// port) names this server.
func (s *Server) hostAllowed(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.ToLower(strings.Trim(name, "[]")), ".")
	if name == "" {
		return false
	}
	if slices.Contains(s.hosts, name) {
		return true
	}
	return s.opts.AnyIPHost && net.ParseIP(name) != nil
}

// authenticated compares the request's Basic password or bearer token
// with the token, in constant time.
func (s *Server) authenticated(r *http.Request) (bool, error) {
	want, err := s.opts.Token(r.Context())
	if err != nil {
		return false, err
	}
	if want == "" {
		return false, errNoToken
	}
	got, ok := "", false
	if _, got, ok = r.BasicAuth(); !ok {
		got, ok = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1, nil
}

// allowedHosts is LoopbackHosts and hosts, lower case, without ports.
func allowedHosts(hosts []string) []string {
	out := slices.Clone(LoopbackHosts)
	for _, h := range hosts {
		if name, _, err := net.SplitHostPort(h); err == nil {
			h = name
		}
		h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
		if h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}
