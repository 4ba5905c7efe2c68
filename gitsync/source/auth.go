package source

import (
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// Secret keys a GitRepository's secretRef may hold, as Flux spells them.
const (
	SecretUsername    = "username"
	SecretPassword    = "password"
	SecretBearerToken = "bearerToken"
)

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
