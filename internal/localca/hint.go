package localca

import (
	"fmt"
	"strings"
)

// TrustHint is the short text knit dev prints once in its banner: where
// the CA is, and how to have curl, the system, or other tools trust it.
// port is knit dev's HTTPS port, for the example request to the quick
// start's hello Service.
func (ca *CA) TrustHint(port int) string {
	p := shellQuote(ca.certPath)
	hintURL := "https://hello.default.localhost/"
	if port != 443 {
		hintURL = fmt.Sprintf("https://hello.default.localhost:%d/", port)
	}
	return fmt.Sprintf(`HTTPS certificates come from knit dev's local CA, %s
(it can vouch only for *.localhost and loopback addresses). To trust it:
  curl           curl --cacert %s %s
  Debian/Ubuntu  sudo cp %s /usr/local/share/ca-certificates/knit-dev.crt && sudo update-ca-certificates
  macOS          sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain %s
  other tools    SSL_CERT_FILE=%s (replaces the system list), NODE_EXTRA_CA_CERTS=%s
`, p, p, hintURL, p, p, p, p)
}

// shellQuote makes s one shell word, so a path with spaces can be pasted.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
