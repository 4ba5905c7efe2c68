package gateway

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// freePort is a TCP and UDP port free on 127.0.0.1 a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if pc, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			pc.Close()
			return port
		}
	}
	t.Fatal("no free port")
	return 0
}

// upstream is a DNS server on loopback answering every A query with
// 192.0.2.7, standing in for this machine's resolver.
func upstream(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(req)
		m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: req.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60},
			A: net.ParseIP("192.0.2.7").To4()}}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}

func query(t *testing.T, server, name string, qtype uint16) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	in, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, server)
	if err != nil {
		t.Fatalf("query %s: %v", name, err)
	}
	return in
}

// A replica's gateway resolves the names the ingress serves to itself,
// answers NXDOMAIN for other in-cluster names, forwards the rest, and
// serves the ingress on its ports to its own replica alone.
func TestGatewayServesItsReplica(t *testing.T) {
	served := map[string]bool{"hello.default.svc.cluster.local": true, "hello.default.localhost": true}
	httpPort, dnsPort := freePort(t), freePort(t)
	g := New(Options{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ingress for "+r.Host) }),
		Serves:  func(h string) bool { return served[h] },
		Ports:   []int{httpPort}, DNSPort: dnsPort, Upstream: []string{upstream(t)},
	})
	// The gateway's address is 127.0.0.3; the replica dials from
	// 127.0.0.1, loopback's default source.
	closer, err := g.Open("127.0.0.3", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	dnsAddr := "127.0.0.3:" + strconv.Itoa(dnsPort)

	for _, tc := range []struct {
		name  string
		qtype uint16
		rcode int
		want  string // the A record's address, "" for none
	}{
		{"hello.default.svc.cluster.local", dns.TypeA, dns.RcodeSuccess, "127.0.0.3"},
		{"HELLO.default.localhost", dns.TypeA, dns.RcodeSuccess, "127.0.0.3"},
		{"hello.default.svc.cluster.local", dns.TypeAAAA, dns.RcodeSuccess, ""},
		{"gone.default.svc.cluster.local", dns.TypeA, dns.RcodeNameError, ""},
		{"example.com.default.svc.cluster.local", dns.TypeA, dns.RcodeNameError, ""},
		{"example.com", dns.TypeA, dns.RcodeSuccess, "192.0.2.7"},
	} {
		in := query(t, dnsAddr, tc.name, tc.qtype)
		got := ""
		for _, rr := range in.Answer {
			if a, ok := rr.(*dns.A); ok {
				got = a.A.String()
			}
		}
		if in.Rcode != tc.rcode || got != tc.want {
			t.Errorf("%s %s: rcode %s, A %q; want %s, %q", tc.name, dns.TypeToString[tc.qtype],
				dns.RcodeToString[in.Rcode], got, dns.RcodeToString[tc.rcode], tc.want)
		}
	}

	url := "http://127.0.0.3:" + strconv.Itoa(httpPort) + "/"
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Host = "hello.default.svc.cluster.local"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ingress for hello.default.svc.cluster.local" {
		t.Errorf("through the gateway: %q", body)
	}
}

// Another address than the replica's gets nothing: no HTTP, no DNS.
func TestGatewayRefusesOthers(t *testing.T) {
	httpPort, dnsPort := freePort(t), freePort(t)
	g := New(Options{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served") }),
		Serves:  func(string) bool { return true },
		Ports:   []int{httpPort}, DNSPort: dnsPort,
	})
	closer, err := g.Open("127.0.0.3", "127.0.0.9")
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	client := &http.Client{Timeout: 2 * time.Second}
	if resp, err := client.Get("http://127.0.0.3:" + strconv.Itoa(httpPort) + "/"); err == nil {
		resp.Body.Close()
		t.Errorf("HTTP from 127.0.0.1 answered %s, want the connection closed", resp.Status)
	}
	m := new(dns.Msg)
	m.SetQuestion("hello.default.svc.cluster.local.", dns.TypeA)
	if in, _, err := (&dns.Client{Timeout: 500 * time.Millisecond}).Exchange(m, "127.0.0.3:"+strconv.Itoa(dnsPort)); err == nil {
		t.Errorf("DNS from 127.0.0.1 answered %v, want no answer", in)
	}
}

// Closing a gateway frees its addresses for the next replica of the
// same slot.
func TestGatewayCloseFreesItsPorts(t *testing.T) {
	httpPort, dnsPort := freePort(t), freePort(t)
	g := New(Options{Handler: http.NotFoundHandler(), Ports: []int{httpPort}, DNSPort: dnsPort})
	for range 2 {
		closer, err := g.Open("127.0.0.3", "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if err := closer.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
