package egress

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParseRules reads any egress-allow value an operator writes in
// config-network: rules or an error, never a panic; the rules, written
// back as knit shows them (Rule.String), read as the same rules.
func FuzzParseRules(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1:9000, 10.1.0.0/16, git.internal.example", "[::1]:8090\n::ffff:127.0.0.1", "Git.Example.:443",
		"10.0.0.1/8", "host:0", "host:65536", "a/b", "[fe80::1%eth0]:80", "::ffff:10.0.0.0/104", "", " ,\t,\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rules, err := ParseRules(s)
		if err != nil {
			return
		}
		written := make([]string, len(rules))
		for i, r := range rules {
			written[i] = r.String()
		}
		again, err := ParseRules(strings.Join(written, ","))
		if err != nil {
			t.Fatalf("rules %q written back as %q do not parse: %v", s, written, err)
		}
		if diff := cmp.Diff(rules, again, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
			t.Fatalf("%q → %q → other rules (-first +again):\n%s", s, written, diff)
		}
	})
}

// FuzzCheckURL: whatever an EventSink's uri or a GitRepository's url
// says, the default policy lets it through only with an http(s) scheme,
// and never when its host is an address of a refused class in any
// spelling Go's URL parser and address parser agree on.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:2379/v3/kv/range", "http://[::ffff:127.0.0.1]/", "http://169.254.169.254/latest/meta-data/",
		"https://hooks.example.com/knit", "http://0.0.0.0:8080/", "http://[fe80::1%25eth0]/", "http://[fd00:ec2::254]/",
		"HTTP://LOCALHOST/", "gopher://example.com/", "file:///etc/passwd", "/srv/git/repo", "http://user:pass@10.0.0.1:99999/",
		"http://2130706433/", "http://0x7f.1/", "http://[::]/",
	} {
		f.Add(s)
	}
	p := &Policy{}
	f.Fuzz(func(t *testing.T, raw string) {
		if p.CheckURL(raw) != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("%q passed but does not parse: %v", raw, err)
		}
		if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
			t.Fatalf("%q passed with scheme %q", raw, u.Scheme)
		}
		if a, err := netip.ParseAddr(u.Hostname()); err == nil {
			if class := p.refused(a.Unmap()); class != "" {
				t.Fatalf("%q passed, its host %s is %s", raw, a, class)
			}
		}
	})
}
