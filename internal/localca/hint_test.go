package localca

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestTrustHint(t *testing.T) {
	tests := []struct {
		name, dir string
		quoted    func(path string) string
	}{
		{"plain path", "knit", func(p string) string { return p }},
		{"path with a space and a quote", "my knit's", func(p string) string {
			return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ca := mustLoad(t, filepath.Join(t.TempDir(), tc.dir))
			p := tc.quoted(ca.CertPath())
			hint := ca.TrustHint(8443)
			for _, want := range []string{
				"curl --cacert " + p + " https://hello.default.localhost:8443/",
				"sudo cp " + p + " /usr/local/share/ca-certificates/knit-dev.crt && sudo update-ca-certificates",
				"security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain " + p,
				"SSL_CERT_FILE=" + p,
				"NODE_EXTRA_CA_CERTS=" + p,
			} {
				if !strings.Contains(hint, want) {
					t.Errorf("hint lacks %q:\n%s", want, hint)
				}
			}
			if !strings.Contains(ca.TrustHint(443), " https://hello.default.localhost/\n") {
				t.Errorf("on port 443 the example names no port:\n%s", ca.TrustHint(443))
			}
			if lines := strings.Count(hint, "\n"); lines > 8 {
				t.Errorf("hint is %d lines; keep it short", lines)
			}
		})
	}
}
