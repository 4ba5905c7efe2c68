package ingress

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// A request routed to a Revision that a newer table no longer lists (the
// Route moved its traffic meanwhile) still reaches the replicas it was
// routed to, rather than failing with no endpoints; a Revision the table
// still lists goes to the table's current addresses.
func TestRetryTransportOutlivesATableSwap(t *testing.T) {
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "routed") }))
	defer old.Close()
	current := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "current") }))
	defer current.Close()
	addr := func(s *httptest.Server) string { return strings.TrimPrefix(s.URL, "http://") }

	for _, tc := range []struct {
		name  string
		table *Table
		want  string
	}{
		{"the revision left the table", &Table{revisions: map[string]*backend{}}, "routed"},
		{"the revision has no address in it", &Table{revisions: map[string]*backend{"ns/rev-00002": {revision: "ns/rev-00002"}}}, "routed"},
		{"the table's addresses win", &Table{revisions: map[string]*backend{"ns/rev-00002": {revision: "ns/rev-00002", addrs: []string{addr(current)}}}}, "current"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var table atomic.Pointer[Table]
			table.Store(tc.table)
			rt := &retryTransport{next: http.DefaultTransport, table: &table}
			routed := &target{backend: &backend{revision: "ns/rev-00002", addrs: []string{addr(old)}}}
			req, err := http.NewRequestWithContext(context.WithValue(context.Background(), targetKey{}, routed), http.MethodGet, "http://placeholder/", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			defer resp.Body.Close()
			if body, _ := io.ReadAll(resp.Body); string(body) != tc.want {
				t.Errorf("answered by %q, want %q", body, tc.want)
			}
		})
	}
}
