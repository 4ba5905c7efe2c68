package gitserver

import (
	"net"
	"net/url"
	"strings"
)

// OnServer reports whether repoURL is a repository of the Git server whose
// base URL is base (scheme://host[:port], served under
// DefaultPathPrefix): same scheme, host and port (a missing port is the
// scheme's), a path under the prefix. Only such URLs may be given the
// server's token: a URL naming any other host, whatever it looks like,
// never gets it.
func OnServer(base, repoURL string) bool {
	b, err := url.Parse(base)
	if err != nil || b.Host == "" {
		return false
	}
	r, err := url.Parse(repoURL)
	if err != nil || r.Host == "" {
		return false
	}
	return strings.EqualFold(b.Scheme, r.Scheme) && hostPort(b) == hostPort(r) &&
		strings.HasPrefix(r.Path, strings.TrimSuffix(b.Path, "/")+DefaultPathPrefix+"/")
}

// hostPort is u's host and port, lower case, the port the scheme's when
// missing.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
