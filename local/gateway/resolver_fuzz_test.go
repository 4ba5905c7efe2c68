package gateway

import (
	"net"
	"testing"

	"github.com/miekg/dns"
)

// A replica's queries are untrusted: whatever parses as a DNS message is
// answered with a message that packs, names the ingress serves resolve to
// the gateway alone.
func FuzzAnswer(f *testing.F) {
	for _, name := range []string{"hello.default.svc.cluster.local.", "example.com.", "cluster.local.", "."} {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		wire, _ := m.Pack()
		f.Add(wire)
	}
	local := net.ParseIP("169.254.64.1")
	// No upstream: forwarding answers SERVFAIL without leaving the process.
	g := New(Options{Serves: func(h string) bool { return h == "hello.default.svc.cluster.local" }})
	f.Fuzz(func(t *testing.T, wire []byte) {
		req := new(dns.Msg)
		if err := req.Unpack(wire); err != nil {
			return
		}
		reply := g.answer(req, local)
		if _, err := reply.Pack(); err != nil {
			t.Fatalf("reply to %v does not pack: %v", req, err)
		}
		for _, rr := range reply.Answer {
			if a, ok := rr.(*dns.A); ok && !a.A.Equal(local) {
				t.Fatalf("answered %v for %v", a.A, req.Question)
			}
		}
	})
}
