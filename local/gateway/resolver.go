package gateway

import (
	"net"
	"strings"

	"github.com/miekg/dns"
)

// clusterDomain is the suffix of in-cluster names: one the ingress does
// not serve does not exist, as CoreDNS answers, rather than going to this
// machine's resolvers (a resolver's search list tries every name under
// it first).
const clusterDomain = "cluster.local"

// ttl is short: a Route made a moment ago, or gone, is seen at once.
const ttl = 5

// resolver answers the replica at peer: names the ingress serves resolve
// to local, the gateway; in-cluster names it does not serve do not
// exist; the rest is this machine's resolvers' answer.
func (g *Gateway) resolver(local, peer net.IP) dns.HandlerFunc {
	return func(w dns.ResponseWriter, req *dns.Msg) {
		if !sameIP(w.RemoteAddr(), peer) {
			return
		}
		_ = w.WriteMsg(g.answer(req, local))
	}
}

// answer is the reply to req from the gateway at local.
func (g *Gateway) answer(req *dns.Msg, local net.IP) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(req)
	if len(req.Question) != 1 || req.Opcode != dns.OpcodeQuery {
		m.Rcode = dns.RcodeFormatError
		return m
	}
	q := req.Question[0]
	name := strings.ToLower(strings.TrimSuffix(q.Name, "."))
	switch {
	case g.opts.Serves != nil && g.opts.Serves(name):
		m.Authoritative = true
		if q.Qclass == dns.ClassINET && (q.Qtype == dns.TypeA || q.Qtype == dns.TypeANY) {
			m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: ttl}, A: local.To4()}}
		}
		return m
	case name == clusterDomain || strings.HasSuffix(name, "."+clusterDomain):
		m.Authoritative = true
		m.Rcode = dns.RcodeNameError
		return m
	}
	return g.forward(req, m)
}

// forward asks this machine's resolvers in turn; failing is SERVFAIL
// (failed, prepared from req).
func (g *Gateway) forward(req, failed *dns.Msg) *dns.Msg {
	for _, upstream := range g.opts.Upstream {
		if in, _, err := g.client.Exchange(req, upstream); err == nil && in != nil {
			return in
		}
	}
	failed.Rcode = dns.RcodeServerFailure
	return failed
}

// Upstream reads the resolvers of a resolv.conf ("ip:port"), this
// machine's by default; none when it cannot be read.
func Upstream(path string) []string {
	cfg, err := dns.ClientConfigFromFile(path)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(cfg.Servers))
	for _, s := range cfg.Servers {
		out = append(out, net.JoinHostPort(s, cfg.Port))
	}
	return out
}
