package queue

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"

	"github.com/knitops/knit/dataplane/grpchealth/grpchealthtest"
)

func TestParseProbes(t *testing.T) {
	type summary struct {
		Period           time.Duration
		Success, Failure int
	}
	tests := []struct {
		name    string
		encoded string
		want    []summary
	}{
		{"default TCP", "", []summary{{time.Second, 1, 3}}},
		{"Knative's default", `{"tcpSocket":{"port":8080,"host":"127.0.0.1"},"successThreshold":1}`, []summary{{time.Second, 1, 3}}},
		{"HTTP with period", `{"httpGet":{"path":"/healthz","port":8080,"httpHeaders":[{"name":"X","value":"y"}]},"periodSeconds":5,"failureThreshold":2}`, []summary{{5 * time.Second, 1, 2}}},
		{"list", `[{"tcpSocket":{}},{"grpc":{"port":9000},"successThreshold":2}]`, []summary{{time.Second, 1, 3}, {time.Second, 2, 3}}},
		{"named port", `{"httpGet":{"port":"http"}}`, []summary{{time.Second, 1, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probes, err := parseProbes(tt.encoded, 8080, false)
			if err != nil {
				t.Fatalf("parseProbes(%s): %v", tt.encoded, err)
			}
			var got []summary
			for _, p := range probes {
				got = append(got, summary{p.period, p.successThreshold, p.failureThreshold})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseProbes(%s) (-want +got):\n%s", tt.encoded, diff)
			}
		})
	}
}

// The probes themselves against real loopback servers.
func TestProbeChecks(t *testing.T) {
	var gotUA, gotHeader string
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ready" {
			gotUA, gotHeader = r.UserAgent(), r.Header.Get("X-Probe")
		}
		if r.URL.Path == "/bad" {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
		}
	}))
	defer app.Close()
	_, portStr, _ := net.SplitHostPort(app.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)

	grpcApp := grpchealthtest.Start(t, map[string]string{"": "SERVING", "db": "SERVING", "warming": "NOT_SERVING"})

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()

	tests := []struct {
		name     string
		encoded  string
		userPort int
		wantErr  string
	}{
		{"TCP to the user port", "", port, ""},
		{"TCP refused", "", closedPort, "connection refused"},
		{"HTTP ok", `{"httpGet":{"path":"/ready","httpHeaders":[{"name":"X-Probe","value":"yes"}]}}`, port, ""},
		{"HTTP 503", `{"httpGet":{"path":"/bad"}}`, port, "answered 503 Service Unavailable"},
		{"gRPC serving, at the user port", `{"grpc":{}}`, grpcApp.Port(), ""},
		{"gRPC serving, at its own port", fmt.Sprintf(`{"grpc":{"port":%d}}`, grpcApp.Port()), port, ""},
		{"gRPC service not serving", fmt.Sprintf(`{"grpc":{"port":%d,"service":"warming"}}`, grpcApp.Port()), port, `service "warming" is NOT_SERVING`},
		{"gRPC service serving", fmt.Sprintf(`{"grpc":{"port":%d,"service":"db"}}`, grpcApp.Port()), port, ""},
		{"gRPC probe of an app with no gRPC", `{"grpc":{}}`, port, "gRPC health check of 127.0.0.1:" + portStr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probes, err := parseProbes(tt.encoded, tt.userPort, false)
			if err != nil {
				t.Fatal(err)
			}
			err = probes[0].check(t.Context())
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("check() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("check() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
	if gotUA != probeUserAgent || gotHeader != "yes" {
		t.Errorf("app saw User-Agent %q and X-Probe %q, want %q and yes", gotUA, gotHeader, probeUserAgent)
	}
}

// With autodetect-http2 an HTTP probe offers the app an h2c upgrade and
// probes over HTTP/2 when it takes it, so an app that answers only HTTP/2
// is found ready; an HTTP/1 app stays ready as before. Without the flag
// the HTTP/2-only app is not ready.
func TestProbeAutodetectsHTTP2(t *testing.T) {
	h2only := httptest.NewServer(h2c.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			http.Error(w, "HTTP/2 only", http.StatusHTTPVersionNotSupported)
			return
		}
		w.WriteHeader(http.StatusOK)
	}), &http2.Server{}))
	defer h2only.Close()
	h1 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	defer h1.Close()
	probe := func(srv *httptest.Server, autodetect bool) error {
		port := srv.Listener.Addr().(*net.TCPAddr).Port
		probes, err := parseProbes(fmt.Sprintf(`{"httpGet":{"path":"/ready","port":%d}}`, port), port, autodetect)
		if err != nil {
			t.Fatal(err)
		}
		return probes[0].check(t.Context())
	}
	if err := probe(h2only, true); err != nil {
		t.Errorf("HTTP/2-only app, autodetect on: %v, want ready", err)
	}
	if err := probe(h2only, false); err == nil {
		t.Error("HTTP/2-only app, autodetect off: ready, want the HTTP/1 probe to fail as in Knative")
	}
	if err := probe(h1, true); err != nil {
		t.Errorf("HTTP/1 app, autodetect on: %v, want ready", err)
	}
}
