package grpchealth_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/knitops/knit/dataplane/grpchealth"
	"github.com/knitops/knit/dataplane/grpchealth/grpchealthtest"
)

func TestCheck(t *testing.T) {
	srv := grpchealthtest.Start(t, map[string]string{
		"": "SERVING", "db": "NOT_SERVING", "cache": "UNKNOWN", "blank": "empty", "old": "code 12",
	})
	tests := []struct {
		name, service, wantErr string
	}{
		{"the server serves", "", ""},
		{"a service not serving", "db", `service "db" is NOT_SERVING`},
		{"a service in an unknown state", "cache", `service "cache" is UNKNOWN`},
		{"an answer with no status field is UNKNOWN", "blank", `service "blank" is UNKNOWN`},
		{"a service the server does not know", "nope", "gRPC status 5 (not found): unknown service"},
		{"a server with no Health service", "old", "gRPC status 12 (no such method: the app serves no grpc.health.v1.Health)"},
	}
	rt := grpchealth.NewTransport()
	defer rt.CloseIdleConnections()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := grpchealth.Check(ctx, rt, srv.Addr, tt.service)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Check(%q) = %v, want error containing %q", tt.service, err, tt.wantErr)
			}
			if got := <-srv.Asked; got != tt.service {
				t.Errorf("the server was asked for %q, want %q", got, tt.service)
			}
		})
	}
}

// TestCheckFailsWithoutAGRPCServer: an HTTP/1 server, or nothing
// listening, is an error naming the address, not a pass.
func TestCheckFailsWithoutAGRPCServer(t *testing.T) {
	h1 := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go h1.Serve(ln)
	defer h1.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	for name, addr := range map[string]string{"an HTTP/1 server": ln.Addr().String(), "nothing listening": closed.Addr().String()} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			rt := grpchealth.NewTransport()
			defer rt.CloseIdleConnections()
			if err := grpchealth.Check(ctx, rt, addr, ""); err == nil || !strings.Contains(err.Error(), addr) {
				t.Errorf("Check = %v, want an error naming %s", err, addr)
			}
		})
	}
}
