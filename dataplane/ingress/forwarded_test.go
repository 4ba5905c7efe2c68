package ingress

import (
	"crypto/tls"
	"net/http"
	"testing"
)

func TestAppendForwarded(t *testing.T) {
	for _, tc := range []struct {
		name, remote, host, prior string
		tls                       bool
		want                      string
	}{
		{name: "ipv4", remote: "127.0.0.1:5555", host: "hello.default.example.com",
			want: `for=127.0.0.1;host="hello.default.example.com";proto=http`},
		{name: "ipv6 with port in host", remote: "[::1]:5555", host: "hello.default.localhost:8080",
			want: `for="[::1]";host="hello.default.localhost:8080";proto=http`},
		{name: "tls", remote: "10.0.0.9:1", host: "h", tls: true,
			want: `for=10.0.0.9;host="h";proto=https`},
		{name: "after the client's", remote: "127.0.0.1:5555", host: "h", prior: "for=192.0.2.60;proto=http",
			want: `for=192.0.2.60;proto=http, for=127.0.0.1;host="h";proto=http`},
		{name: "no address", remote: "", host: `we"ird`,
			want: `for=unknown;host="we\"ird";proto=http`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &http.Request{RemoteAddr: tc.remote, Host: tc.host, Header: http.Header{}}
			if tc.tls {
				in.TLS = &tls.ConnectionState{}
			}
			out := http.Header{}
			if tc.prior != "" {
				out.Set("Forwarded", tc.prior)
			}
			appendForwarded(out, in)
			if got := out.Values("Forwarded"); len(got) != 1 || got[0] != tc.want {
				t.Errorf("Forwarded = %q, want [%q]", got, tc.want)
			}
		})
	}
}

// The element is built on every request: one string, no other allocation.
func TestAppendForwardedAllocations(t *testing.T) {
	in := &http.Request{RemoteAddr: "127.0.0.1:5555", Host: "hello.default.example.com", Header: http.Header{}}
	out := http.Header{}
	allocs := testing.AllocsPerRun(100, func() {
		delete(out, "Forwarded") // a client that sent none
		appendForwarded(out, in)
	})
	if allocs > 2 { // the element, and the header's one-value slice
		t.Errorf("appendForwarded allocates %v times a request, want at most 2", allocs)
	}
}
