package source

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	corev1 "k8s.io/api/core/v1"
)

// Secret keys a GitRepository's secretRef may hold, as Flux spells them.
const (
	SecretUsername    = "username"
	SecretPassword    = "password"
	SecretBearerToken = "bearerToken"
)

// CredentialsLabel marks a Secret as meant for knit's Git use (value
// "true"): only such a Secret is read for a GitRepository's credentials
// and webhook secret, and for its forge API token. A GitRepository may
// name any Secret of its namespace and sends what it reads to the host of
// its own URL, so without the label whoever may create GitRepositories
// could read every Secret of the namespace (ServiceAccount tokens, TLS
// keys) by pointing one at a server of theirs. Labelling a Secret takes
// the right to update it, as Argo CD's argocd.argoproj.io/secret-type
// does.
const CredentialsLabel = "knit.dev/git-credentials"

// CheckCredentialsSecret refuses a Secret not labelled CredentialsLabel
// "true", saying how to label it; nothing of a refused Secret is used.
func CheckCredentialsSecret(s *corev1.Secret) error {
	if s.Labels[CredentialsLabel] == "true" {
		return nil
	}
	return fmt.Errorf("Secret %s is not labelled %s=true: knit reads only Secrets meant for Git "+
		"(kubectl label secret -n %s %s %s=true)", s.Name, CredentialsLabel, s.Namespace, s.Name, CredentialsLabel)
}

// AuthFromSecret turns a credentials Secret's data into HTTP auth: a
// bearer token, else basic auth (a forge token goes in password), else
// none.
func AuthFromSecret(data map[string][]byte) transport.AuthMethod {
	if t := data[SecretBearerToken]; len(t) > 0 {
		return &githttp.TokenAuth{Token: string(t)}
	}
	user, pass := string(data[SecretUsername]), string(data[SecretPassword])
	if user == "" && pass == "" {
		return nil
	}
	if user == "" {
		user = "git" // forges accept any user name with a token as password
	}
	return &githttp.BasicAuth{Username: user, Password: pass}
}

// HasUserinfo reports whether a repository URL carries a user name or
// password (scheme://user[:password]@host/…). It reads the authority as
// written, so a URL url.Parse refuses is caught too.
func HasUserinfo(raw string) bool {
	_, authority, _ := splitAuthority(raw)
	return strings.Contains(authority, "@")
}

// splitAuthority cuts raw into "scheme://", the authority, and the rest
// (path, query, fragment); a raw without "://" is all rest.
func splitAuthority(raw string) (prefix, authority, rest string) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return "", "", raw
	}
	prefix, authority = raw[:i+3], raw[i+3:]
	if j := strings.IndexAny(authority, "/?#"); j >= 0 {
		authority, rest = authority[:j], authority[j:]
	}
	return prefix, authority, rest
}

// RedactURL is raw without its user information, query and fragment,
// for messages, logs and status: a user name may be a token as much as a
// password is. A URL that does not parse is replaced whole.
func RedactURL(raw string) string {
	prefix, authority, rest := splitAuthority(raw)
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		authority = authority[i+1:]
	}
	u, err := url.Parse(prefix + authority + rest)
	if err != nil {
		return "(a URL that does not parse)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}
