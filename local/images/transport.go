package images

import (
	"fmt"
	"net"
	"net/http"
	"slices"
)

// GuardPlainHTTP is next (nil: http.DefaultTransport) refusing plain
// HTTP to any registry but loopback and the hosts allowed ("host" or
// "host:port"): what the store pulls through, and what anything else of
// knit dev that asks a registry must use, so a tag is not resolved over
// a connection its pull would refuse.
func GuardPlainHTTP(next http.RoundTripper, allowed []string) http.RoundTripper {
	return plainHTTPGuard{next: orDefault(next), allowed: allowed}
}

// plainHTTPGuard refuses plain-HTTP requests to a registry that is
// neither on loopback nor listed: go-containerregistry falls back to HTTP
// for private (RFC 1918) addresses on its own, and a pull must not send
// credentials, or trust a manifest, in clear to a host the user did not
// name, as containerd's hosts.toml would not.
type plainHTTPGuard struct {
	next    http.RoundTripper
	allowed []string
}

func (g plainHTTPGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "http" && !g.mayUsePlainHTTP(req.URL.Host) {
		return nil, fmt.Errorf("registry %s is not served over HTTPS, and plain HTTP is allowed only to loopback and the registries knit dev lists (--plain-http-registry)", req.URL.Host)
	}
	return g.next.RoundTrip(req)
}

func (g plainHTTPGuard) mayUsePlainHTTP(host string) bool {
	if slices.Contains(g.allowed, host) {
		return true
	}
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
