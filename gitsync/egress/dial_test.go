package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Every connection is checked on the address it goes to, after the name
// was resolved: "localhost" passes CheckURL, as any name does, and is
// refused once it resolves to loopback, which is what stops a name that
// rebinds to an internal address between a check and a request.
func TestTransportChecksResolvedAddresses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	byAddr, byName := srv.URL, "http://localhost:"+port
	rules := func(s string) []Rule {
		r, err := ParseRules(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name    string
		policy  *Policy
		url     string
		allowed bool
	}{
		{"no policy: everything, as before", nil, byAddr, true},
		{"the default refuses loopback", &Policy{}, byAddr, false},
		{"a name resolving to loopback is refused when dialled", &Policy{}, byName, false},
		{"an operator allows the address and port", &Policy{Allow: rules("127.0.0.1:" + port)}, byAddr, true},
		{"an operator allows the name", &Policy{Allow: rules("localhost")}, byName, true},
		{"allowing another port allows nothing here", &Policy{Allow: rules("127.0.0.1:1")}, byAddr, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.policy != nil && strings.Contains(tc.url, "localhost") {
				if err := tc.policy.CheckURL(tc.url); err != nil {
					t.Fatalf("CheckURL refused a name before resolving it: %v", err)
				}
			}
			client := &http.Client{Transport: Transport(func() *Policy { return tc.policy })}
			resp, err := client.Get(tc.url)
			if err == nil {
				resp.Body.Close()
			}
			var denied *DeniedError
			switch {
			case tc.allowed && err != nil:
				t.Errorf("GET %s: %v, want it allowed", tc.url, err)
			case !tc.allowed && !errors.As(err, &denied):
				t.Errorf("GET %s: err = %v, want a *DeniedError", tc.url, err)
			}
		})
	}
}

// A policy in the request's context overrides the transport's, so one
// transport serves callers with different policies (go-git's, installed
// once per process).
func TestPolicyFromContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	client := &http.Client{Transport: Transport(nil)}
	req, _ := http.NewRequestWithContext(WithPolicy(context.Background(), &Policy{}), http.MethodGet, srv.URL, nil)
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("a request under the default policy reached loopback")
	}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatalf("a request without a policy: %v", err)
	}
	resp.Body.Close()
}

func TestCheckResolved(t *testing.T) {
	if err := (&Policy{}).CheckResolved(context.Background(), "http://localhost:2379/v3/kv/range"); err == nil ||
		!strings.Contains(err.Error(), "localhost (127.0.0.1:2379)") && !strings.Contains(err.Error(), "localhost ([::1]:2379)") {
		t.Errorf("CheckResolved(localhost) = %v, want a refusal naming the name and the address", err)
	}
	if err := (&Policy{}).CheckResolved(context.Background(), "http://no-such-host.invalid/"); err != nil {
		t.Errorf("an unresolvable name: %v, want it left to the delivery", err)
	}
}
