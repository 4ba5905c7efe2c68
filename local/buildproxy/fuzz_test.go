package buildproxy

import (
	"net/netip"
	"testing"
)

// FuzzParseAllowList reads any --build-allow-host value: rules or an
// error, never a panic; the rules, written back as knit shows them, read
// as the same rules; and each rule allows what it names.
func FuzzParseAllowList(f *testing.F) {
	for _, s := range []string{
		"pypi.org,files.pythonhosted.org", "*.example.org:8443", "127.0.0.1:8080", "[::1]:8080", "::1", "::ffff:127.0.0.1",
		"fe80::1%eth0", "*", "*.org", "host:0", "host:65536", "a/b", "[::1]", "[pypi.org]", "Pypi.Org.", " , ,", "1.2.3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		list, err := ParseAllowList(s)
		if err != nil {
			return
		}
		again, err := ParseAllowList(list.String())
		if err != nil {
			t.Fatalf("%q written back as %q does not parse: %v", s, list.String(), err)
		}
		if len(again) != len(list) {
			t.Fatalf("%q → %q → %d rules, want %d", s, list.String(), len(again), len(list))
		}
		for i, r := range list {
			if again[i] != r {
				t.Fatalf("%q → %q: rule %d is %+v, then %+v", s, list.String(), i, r, again[i])
			}
			host := r.Host
			if r.Addr.IsValid() {
				host = r.Addr.String()
			} else if r.Wildcard {
				host = "sub." + r.Host
			}
			if !list.Allows(host, r.Ports()[0]) {
				t.Fatalf("%q does not allow %s:%d, which it names", s, host, r.Ports()[0])
			}
			if r.Addr.IsValid() && r.Addr != r.Addr.Unmap() || r.Addr.Zone() != "" || r.Addr == (netip.Addr{}) && r.Host == "" {
				t.Fatalf("%q: rule %+v", s, r)
			}
		}
	})
}
