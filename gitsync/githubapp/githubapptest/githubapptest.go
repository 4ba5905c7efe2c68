// Package githubapptest is a fake of GitHub's installation token endpoint
// (POST /app/installations/{id}/access_tokens), built from GitHub's REST
// documentation, for tests of what uses GitHub App credentials: there is
// no live GitHub here.
package githubapptest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// AppID and InstallationID are the fake's app and its one installation.
const (
	AppID          = "1234"
	InstallationID = "42"
)

// GitHub is the fake. Tokens it issues are "ghs_token<n>", n counting
// from 1.
type GitHub struct {
	*httptest.Server
	Key *rsa.PrivateKey
	// Asked counts the tokens issued.
	Asked atomic.Int32
	mu    sync.Mutex
	life  time.Duration
	deny  bool
}

// New starts the fake on loopback, closed with the test.
func New(t testing.TB) *GitHub {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	g := &GitHub{Key: key, life: time.Hour}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.Close)
	return g
}

// SetLifetime sets how long the next tokens live.
func (g *GitHub) SetLifetime(d time.Duration) { g.mu.Lock(); g.life = d; g.mu.Unlock() }

// Deny makes the fake answer 401, as GitHub does to a JWT it cannot
// verify.
func (g *GitHub) Deny(deny bool) { g.mu.Lock(); g.deny = deny; g.mu.Unlock() }

// Secret is the data of a Secret holding the app's credentials, with the
// fake as the API root (githubAppBaseURL).
func (g *GitHub) Secret() map[string][]byte {
	der := x509.MarshalPKCS1PrivateKey(g.Key)
	return map[string][]byte{
		"githubAppID": []byte(AppID), "githubAppInstallationID": []byte(InstallationID), "githubAppBaseURL": []byte(g.URL),
		"githubAppPrivateKey": pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der}),
	}
}

func (g *GitHub) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/app/installations/"+InstallationID+"/access_tokens" || r.Header.Get("Accept") != "application/vnd.github+json" {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`)
		return
	}
	g.mu.Lock()
	life, deny := g.life, g.deny
	g.mu.Unlock()
	raw, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	claims := &jwt.RegisteredClaims{}
	_, err := jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return &g.Key.PublicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(AppID), jwt.WithIssuedAt())
	if err != nil || deny || claims.ExpiresAt.Sub(claims.IssuedAt.Time) > 10*time.Minute {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message":"A JSON web token could not be decoded","documentation_url":"https://docs.github.com/rest"}`)
		return
	}
	n := g.Asked.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(map[string]any{"token": fmt.Sprintf("ghs_token%d", n), "expires_at": time.Now().Add(life).UTC().Format(time.RFC3339)})
}
