package main

import (
	"strings"
	"testing"
)

// knit gitserver serves clear text only when told to, and never half
// configured.
func TestServerTLS(t *testing.T) {
	for _, tc := range []struct {
		name, cert, key string
		plain           bool
		wantErr         string
	}{
		{name: "clear text asked for", plain: true},
		{name: "neither", wantErr: "--plain-http to serve clear text"},
		{name: "a certificate without its key", cert: "tls.crt", wantErr: "go together"},
		{name: "both", cert: "tls.crt", key: "tls.key", plain: true, wantErr: "exclude each other"},
		{name: "missing files", cert: "/nonexistent/tls.crt", key: "/nonexistent/tls.key", wantErr: "TLS certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := serverTLS(tc.cert, tc.key, tc.plain)
			if tc.wantErr == "" {
				if err != nil || cfg != nil {
					t.Fatalf("serverTLS = %v, %v; want clear text", cfg, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("serverTLS error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
