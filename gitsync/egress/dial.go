package egress

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type policyKey struct{}

// WithPolicy returns ctx carrying p: connections DialContext makes for a
// request with this context obey p.
func WithPolicy(ctx context.Context, p *Policy) context.Context {
	return context.WithValue(ctx, policyKey{}, p)
}

// FromContext is the policy WithPolicy put in ctx, or nil.
func FromContext(ctx context.Context) *Policy {
	p, _ := ctx.Value(policyKey{}).(*Policy)
	return p
}

// policyFor is the policy a dial obeys: the context's, else policy's, else
// none.
func policyFor(ctx context.Context, policy func() *Policy) *Policy {
	if p := FromContext(ctx); p != nil {
		return p
	}
	if policy != nil {
		return policy()
	}
	return nil
}

// DialContext wraps d so that every connection is checked, on the address
// it is about to connect to, after name resolution: a name that resolved
// to a public address when a URL was checked and to loopback now
// (rebinding) is refused all the same. The policy is the dial context's
// (WithPolicy), else policy's; with neither, nothing is checked.
func DialContext(d *net.Dialer, policy func() *Policy) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		p := policyFor(ctx, policy)
		if p == nil {
			return d.DialContext(ctx, network, address)
		}
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		if _, err := netip.ParseAddr(host); err == nil {
			host = "" // an address: no name to match rules on
		}
		guarded := *d
		inner := d.Control
		guarded.Control = func(network, resolved string, c syscall.RawConn) error {
			addr, err := netip.ParseAddrPort(resolved)
			if err != nil {
				return fmt.Errorf("egress: dialing %q: %w", resolved, err)
			}
			if err := p.CheckAddr(host, addr); err != nil {
				return err
			}
			if inner != nil {
				return inner(network, resolved, c)
			}
			return nil
		}
		return guarded.DialContext(ctx, network, address)
	}
}

// Transport is http.DefaultTransport's settings with every connection
// checked by DialContext. A request under a policy never goes through a
// proxy, whose address is all a dial would see.
func Transport(policy func() *Policy) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = DialContext(&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}, policy)
	t.Proxy = func(req *http.Request) (*url.URL, error) {
		if policyFor(req.Context(), policy) != nil {
			return nil, nil
		}
		return http.ProxyFromEnvironment(req)
	}
	return t
}

// CheckResolved is CheckURL, then, for a host name, the check DialContext
// makes, on each address the name resolves to now: what a condition shows
// before anything is sent. A name that does not resolve passes; sending to
// it fails on its own.
func (p *Policy) CheckResolved(ctx context.Context, raw string) error {
	if err := p.CheckURL(raw); err != nil {
		return err
	}
	u, err := url.Parse(raw)
	if err != nil || (strings.ToLower(u.Scheme) != "http" && strings.ToLower(u.Scheme) != "https") {
		return nil // an extra scheme the policy allows: nothing to resolve
	}
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil {
		return nil // checked by CheckURL
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return &DeniedError{Target: u.Redacted(), Reason: fmt.Sprintf("port %q is not a number", port)}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if err := p.CheckAddr(host, netip.AddrPortFrom(a, uint16(n))); err != nil {
			return err
		}
	}
	return nil
}
