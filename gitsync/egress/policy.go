package egress

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// AllowKey is the config-network key whose rules make a Policy's Allow.
const AllowKey = "egress-allow"

// allowHint tells a refused user where an operator lifts the refusal.
const allowHint = "an operator can allow it in ConfigMap knit-system/config-network, key " + AllowKey

// Policy is where knit may connect on a user's behalf. The zero Policy
// is the default: http and https to any address but the refused classes
// (loopback, link-local, unspecified, multicast, cloud metadata).
type Policy struct {
	// Allow lists exceptions: addresses, ranges or host names that may be
	// reached although refused otherwise (config-network egress-allow).
	Allow []Rule
	// Deny adds ranges refused like loopback: the control plane's own
	// addresses (OwnAddresses).
	Deny []netip.Prefix
	// Schemes lists schemes allowed besides http and https; none in knit,
	// "file" for tests that fetch from a local directory.
	Schemes []string
}

// Rule is one exception to a Policy: an address range or a host name, on
// one port or all.
type Rule struct {
	// Prefix is the addresses allowed; unset when Host is.
	Prefix netip.Prefix
	// Host is a host name allowed as written in a URL, lower case.
	Host string
	// Port is the one port allowed; 0 allows all.
	Port uint16
}

func (r Rule) String() string {
	target := r.Host
	if r.Prefix.IsValid() {
		target = r.Prefix.String()
		if r.Prefix.IsSingleIP() {
			target = r.Prefix.Addr().String()
		}
	}
	if r.Port == 0 {
		return target
	}
	return net.JoinHostPort(target, strconv.Itoa(int(r.Port)))
}

// matches reports whether r allows a connection to addr, reached through
// the name host ("" when the URL named an address).
func (r Rule) matches(host string, addr netip.AddrPort) bool {
	if r.Port != 0 && r.Port != addr.Port() {
		return false
	}
	if r.Prefix.IsValid() {
		return r.Prefix.Contains(addr.Addr())
	}
	return host != "" && strings.EqualFold(strings.TrimSuffix(host, "."), r.Host)
}

// ParseRules reads rules separated by commas, spaces or new lines, each an
// address ("127.0.0.1", "::1"), a range ("10.0.0.0/8"), or a host name
// ("git.internal.example"), with an optional port ("127.0.0.1:8090",
// "[::1]:8090", "git.internal.example:443").
func ParseRules(s string) ([]Rule, error) {
	var rules []Rule
	for _, field := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' }) {
		r, err := parseRule(field)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}

func parseRule(s string) (Rule, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return Rule{Prefix: p.Masked()}, nil
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return Rule{Prefix: netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())}, nil
	}
	var r Rule
	target := s
	if host, port, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return Rule{}, fmt.Errorf("%q: port %q is not a number from 1 to 65535", s, port)
		}
		target, r.Port = host, uint16(n)
	}
	host := strings.TrimSuffix(target, ".") // the root's dot; "." alone names nothing
	if a, err := netip.ParseAddr(host); err == nil {
		r.Prefix = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		return r, nil
	}
	if strings.Contains(target, "/") || !validHost(host) {
		return Rule{}, fmt.Errorf("%q: want an address, a CIDR range or a host name, each with an optional :port", s)
	}
	r.Host = strings.ToLower(host)
	return r, nil
}

// validHost reports whether h is a DNS name: dot-separated labels of 1 to
// 63 letters, digits and dashes, 253 characters at most.
func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return false
			}
		}
	}
	return true
}

// DeniedError says the policy refused a URL or a connection.
type DeniedError struct {
	// Target is what was refused: a URL, or the address a name resolved to.
	Target string
	// Reason says why, in words.
	Reason string
	// Allowable says an operator's rule could allow it: an address, not a
	// scheme.
	Allowable bool
}

func (e *DeniedError) Error() string {
	if !e.Allowable {
		return fmt.Sprintf("egress to %s refused: %s; knit connects to http and https URLs only", e.Target, e.Reason)
	}
	return fmt.Sprintf("egress to %s refused: %s; %s", e.Target, e.Reason, allowHint)
}

// CheckURL checks what a URL says before any lookup: its scheme, and its
// host when that is an address. A host name passes here; DialContext
// checks what it resolves to.
func (p *Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return &DeniedError{Target: fmt.Sprintf("%q", raw), Reason: "it is not a URL"}
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme == "" && strings.HasPrefix(u.Path, "/") && u.Host == "" {
		scheme = "file" // a local path, as Git reads one
	}
	if scheme != "http" && scheme != "https" {
		if slices.Contains(p.Schemes, scheme) {
			return nil
		}
		if scheme == "" || u.Scheme == "" {
			return &DeniedError{Target: fmt.Sprintf("%q", raw), Reason: "it is not an absolute http or https URL"}
		}
		return &DeniedError{Target: u.Redacted(), Reason: fmt.Sprintf("scheme %q is not http or https", scheme)}
	}
	host := u.Hostname()
	if host == "" {
		return &DeniedError{Target: u.Redacted(), Reason: "the URL names no host"}
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return nil // a name: checked once resolved
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return &DeniedError{Target: u.Redacted(), Reason: fmt.Sprintf("port %q is not a number", port)}
	}
	return p.CheckAddr("", netip.AddrPortFrom(a, uint16(n)))
}

// CheckAddr checks one connection: to addr, reached through the name host
// ("" when the URL named the address).
func (p *Policy) CheckAddr(host string, addr netip.AddrPort) error {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	class := p.refused(addr.Addr())
	if class == "" {
		return nil
	}
	for _, r := range p.Allow {
		if r.matches(host, addr) {
			return nil
		}
	}
	target := addr.String()
	if host != "" {
		target = fmt.Sprintf("%s (%s)", host, addr)
	}
	return &DeniedError{Target: target, Reason: fmt.Sprintf("%s is %s", addr.Addr(), class), Allowable: true}
}

// metadata are the cloud metadata services knit never calls unasked: the
// link-local 169.254.169.254 is refused as link-local already.
var metadata = []netip.Prefix{
	netip.MustParsePrefix("fd00:ec2::254/128"),  // AWS over IPv6
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud
}

// thisNetwork is 0.0.0.0/8: Linux connects 0.x.x.x to the local host.
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// refused names the class of a refused address, "" for any other.
func (p *Policy) refused(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified() || thisNetwork.Contains(a):
		return "an unspecified address, which reaches the local host"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return "a link-local address, where cloud metadata services answer"
	case a.IsMulticast():
		return "a multicast address"
	}
	for _, m := range metadata {
		if m.Contains(a) {
			return "a cloud metadata service's address"
		}
	}
	for _, d := range p.Deny {
		if d.Contains(a) {
			return "an address of knit's own control plane"
		}
	}
	return ""
}
