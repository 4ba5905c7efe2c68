package buildproxy

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// defaultPorts are what a rule without a port allows: plain HTTP and
// HTTPS, what package registries serve on. Any other port is named.
var defaultPorts = []uint16{80, 443}

// Rule is one entry of the allow list: a host name, every subdomain of
// one (Wildcard), or an address; on one port, or on 80 and 443 when Port
// is 0.
type Rule struct {
	// Host is a lower-case host name without its root dot; for a
	// wildcard, the domain whose subdomains are allowed.
	Host string
	// Wildcard allows every name under Host (a.Host, a.b.Host), not Host
	// itself: "*.example.org".
	Wildcard bool
	// Addr is an address allowed as a step writes it in a URL; unset
	// when Host is.
	Addr netip.Addr
	// Port is the one port allowed; 0 allows 80 and 443.
	Port uint16
}

// String writes r as --build-allow-host reads it.
func (r Rule) String() string {
	target := r.Host
	switch {
	case r.Addr.IsValid():
		target = r.Addr.String()
	case r.Wildcard:
		target = "*." + r.Host
	}
	if r.Port == 0 {
		return target
	}
	return net.JoinHostPort(target, strconv.Itoa(int(r.Port)))
}

// Ports are the ports r allows.
func (r Rule) Ports() []uint16 {
	if r.Port == 0 {
		return defaultPorts
	}
	return []uint16{r.Port}
}

// AllowList is what RUN steps may reach through the proxy.
type AllowList []Rule

// ParseAllowList reads --build-allow-host values, each one rule or a
// comma-separated list of them. Empty entries (a trailing comma) are
// ignored; an empty list allows nothing.
func ParseAllowList(values ...string) (AllowList, error) {
	var out AllowList
	for _, v := range values {
		for field := range strings.SplitSeq(v, ",") {
			field = strings.TrimSpace(field)
			if field == "" {
				continue
			}
			r, err := ParseRule(field)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// ParseRule reads one entry: HOST, *.DOMAIN or an address (127.0.0.1,
// ::1), each with an optional :PORT ([::1]:8080 for IPv6).
func ParseRule(s string) (Rule, error) {
	if strings.Contains(s, "://") {
		return Rule{}, fmt.Errorf("--build-allow-host %q: want HOST[:PORT], not a URL", s)
	}
	target, port, err := splitPort(s)
	if err != nil {
		return Rule{}, fmt.Errorf("--build-allow-host %q: %w", s, err)
	}
	r := Rule{Port: port}
	if a, err := netip.ParseAddr(target); err == nil {
		if a.Zone() != "" {
			return Rule{}, fmt.Errorf("--build-allow-host %q: an address with a zone names no host a RUN step can reach", s)
		}
		r.Addr = a.Unmap()
		return r, nil
	}
	host := strings.ToLower(strings.TrimSuffix(target, "."))
	if strings.Contains(host, "*") {
		rest, ok := strings.CutPrefix(host, "*.")
		if !ok || !strings.Contains(rest, ".") || !validName(rest) {
			return Rule{}, fmt.Errorf("--build-allow-host %q: a wildcard is *.DOMAIN, with a domain of two labels or more (*.example.org)", s)
		}
		r.Host, r.Wildcard = rest, true
		return r, nil
	}
	if !validName(host) {
		return Rule{}, fmt.Errorf("--build-allow-host %q: want HOST, *.DOMAIN or an IP address, each with an optional :PORT (pypi.org, *.example.org:8443, 127.0.0.1:8080, [::1]:8080)", s)
	}
	r.Host = host
	return r, nil
}

// splitPort splits an optional :PORT off s. An IPv6 address has colons
// of its own: with a port it is written in brackets.
func splitPort(s string) (string, uint16, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		if _, addrErr := netip.ParseAddr(s); addrErr == nil {
			return s, 0, nil
		}
		if inner, ok := strings.CutPrefix(s, "["); ok && strings.HasSuffix(inner, "]") {
			return strings.TrimSuffix(inner, "]"), 0, nil
		}
		if strings.Contains(s, ":") {
			return "", 0, err
		}
		return s, 0, nil
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	return host, uint16(n), nil
}

// validName reports whether h is a DNS name: dot-separated labels of 1 to
// 63 lower-case letters, digits and dashes, 253 characters at most, the
// last not all digits (that is an address, or part of one).
func validName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	labels := strings.Split(h, ".")
	for _, label := range labels {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
				return false
			}
		}
	}
	return strings.Trim(labels[len(labels)-1], "0123456789") != ""
}

// Allows reports whether a step may reach host (a name or an address as
// written in its URL, without brackets) on port.
func (l AllowList) Allows(host string, port uint16) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	addr, err := netip.ParseAddr(host)
	isAddr := err == nil
	for _, r := range l {
		if !slices.Contains(r.Ports(), port) {
			continue
		}
		switch {
		case r.Addr.IsValid():
			if isAddr && addr.Unmap() == r.Addr {
				return true
			}
		case isAddr:
		case r.Wildcard:
			if strings.HasSuffix(host, "."+r.Host) {
				return true
			}
		case host == r.Host:
			return true
		}
	}
	return false
}

// Addresses are the rules that name addresses: what the dial-time check
// lets through although it refuses loopback and link-local addresses
// reached through a name.
func (l AllowList) Addresses() []Rule {
	var out []Rule
	for _, r := range l {
		if r.Addr.IsValid() {
			out = append(out, r)
		}
	}
	return out
}

// String writes the list as one --build-allow-host value.
func (l AllowList) String() string {
	s := make([]string, len(l))
	for i, r := range l {
		s[i] = r.String()
	}
	return strings.Join(s, ",")
}
