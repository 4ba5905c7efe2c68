package hopauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Purposes a Token is made for; a token for one opens nothing else.
const (
	// PurposeAutoscaler opens the autoscaler's activator endpoints.
	PurposeAutoscaler = "autoscaler"
)

// ErrUnauthenticated is wrapped by every refusal of a token or signature.
var ErrUnauthenticated = errors.New("unauthenticated")

// Token is the bearer token for purpose under the signing key.
func (k *Keyring) Token(purpose string) string {
	return token(k.current()[0], purpose)
}

func token(key []byte, purpose string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("knit-hop-token/v1\x00"))
	m.Write([]byte(purpose))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckToken says whether got is purpose's token under any key, in time
// that does not depend on where got differs.
func (k *Keyring) CheckToken(purpose, got string) error {
	ok := 0
	for _, key := range k.current() {
		ok |= subtle.ConstantTimeCompare([]byte(token(key, purpose)), []byte(got))
	}
	if ok == 0 {
		return fmt.Errorf("%w: bad token", ErrUnauthenticated)
	}
	return nil
}

// Authorize sets r's Authorization to purpose's bearer token.
func (k *Keyring) Authorize(r *http.Request, purpose string) {
	r.Header.Set("Authorization", "Bearer "+k.Token(purpose))
}

// RequireToken wraps next so only a request bearing purpose's token
// reaches it; any other gets 401 and next never sees it.
func (k *Keyring) RequireToken(purpose string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || k.CheckToken(purpose, got) != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="knit"`)
			http.Error(w, "knit: this endpoint is for knit's own components", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
