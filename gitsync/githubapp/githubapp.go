// Package githubapp turns GitHub App credentials (app id, installation id,
// private key) into the short-lived installation tokens Git and the
// GitHub API take, as Flux's GitRepository does for provider github:
// many organisations forbid personal tokens and allow only apps.
//
// A token is asked for with a JWT the app's key signs (RS256, at most ten
// minutes long, as GitHub's documentation requires) and kept until five
// minutes before it expires. The private key stays in the process that
// read it: what leaves (to a build Job, to a fetch) is the token.
package githubapp

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// The keys of a GitRepository's Secret that hold GitHub App credentials,
// as Flux spells them.
const (
	KeyAppID          = "githubAppID"
	KeyInstallationID = "githubAppInstallationID"
	KeyPrivateKey     = "githubAppPrivateKey"
	// KeyBaseURL is GitHub Enterprise Server's API root
	// (https://ghe.example.com/api/v3); empty is github.com's.
	KeyBaseURL = "githubAppBaseURL"
)

// DefaultBaseURL is github.com's API.
const DefaultBaseURL = "https://api.github.com"

// TokenUser is the user name Git takes an installation token with.
const TokenUser = "x-access-token"

// refreshBefore is how long before its expiry a token is replaced.
const refreshBefore = 5 * time.Minute

// maxAnswer bounds what is read of GitHub's answer.
const maxAnswer = 64 << 10

// Credentials are one app installation's.
type Credentials struct {
	AppID, InstallationID int64
	BaseURL               string
	key                   *rsa.PrivateKey
	digest                [32]byte // of the key, for the cache
}

// Has reports whether a Secret's data holds GitHub App credentials.
func Has(data map[string][]byte) bool { return len(data[KeyAppID]) > 0 }

// FromSecret reads GitHub App credentials from a Secret's data. Errors
// name the key at fault, never its content.
func FromSecret(data map[string][]byte) (*Credentials, error) {
	c := &Credentials{BaseURL: strings.TrimRight(string(data[KeyBaseURL]), "/")}
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	var err error
	if c.AppID, err = positive(data, KeyAppID); err != nil {
		return nil, err
	}
	if c.InstallationID, err = positive(data, KeyInstallationID); err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data[KeyPrivateKey])
	if block == nil {
		return nil, fmt.Errorf("%s is not a PEM private key (the .pem file GitHub gives for the app)", KeyPrivateKey)
	}
	if c.key, err = parseKey(block.Bytes); err != nil {
		return nil, fmt.Errorf("%s: %w", KeyPrivateKey, err)
	}
	c.digest = sha256.Sum256(block.Bytes)
	return c, nil
}

func positive(data map[string][]byte, key string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(string(data[key])), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s must be the app's number (as GitHub shows it)", key)
	}
	return n, nil
}

func parseKey(der []byte) (*rsa.PrivateKey, error) {
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, errors.New("not an RSA private key in PKCS#1 or PKCS#8")
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("not an RSA key: GitHub Apps sign with RS256")
	}
	return rk, nil
}

// Tokens asks GitHub for installation tokens and keeps them until they
// are about to expire. The zero value is not usable: use New.
type Tokens struct {
	client *http.Client
	now    func() time.Time
	mu     sync.Mutex
	cache  map[cacheKey]token
}

type cacheKey struct {
	base              string
	app, installation int64
	digest            [32]byte
}

type token struct {
	value   string
	expires time.Time
}

// New returns Tokens asking through client (nil: http.DefaultClient;
// knit passes one whose connections obey its egress policy).
func New(client *http.Client) *Tokens {
	if client == nil {
		client = http.DefaultClient
	}
	return &Tokens{client: client, now: time.Now, cache: map[cacheKey]token{}}
}

// Token returns an installation token for c, a cached one while it has
// more than five minutes left.
func (t *Tokens) Token(ctx context.Context, c *Credentials) (string, error) {
	k := cacheKey{c.BaseURL, c.AppID, c.InstallationID, c.digest}
	t.mu.Lock()
	tok, ok := t.cache[k]
	t.mu.Unlock()
	if ok && t.now().Add(refreshBefore).Before(tok.expires) {
		return tok.value, nil
	}
	tok, err := t.ask(ctx, c)
	if err != nil {
		return "", err
	}
	t.mu.Lock()
	for key, old := range t.cache { // drop what expired, so the cache stays small
		if !t.now().Before(old.expires) {
			delete(t.cache, key)
		}
	}
	t.cache[k] = tok
	t.mu.Unlock()
	return tok.value, nil
}

// ask exchanges an app JWT for an installation token
// (POST /app/installations/{id}/access_tokens).
func (t *Tokens) ask(ctx context.Context, c *Credentials) (token, error) {
	now := t.now()
	signed, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.RegisteredClaims{
		Issuer:    strconv.FormatInt(c.AppID, 10),
		IssuedAt:  jwt.NewNumericDate(now.Add(-time.Minute)), // GitHub's advice for clock drift
		ExpiresAt: jwt.NewNumericDate(now.Add(9 * time.Minute)),
	}).SignedString(c.key)
	if err != nil {
		return token{}, fmt.Errorf("sign the GitHub App JWT: %w", err)
	}
	url := fmt.Sprintf("%s/app/installations/%d/access_tokens", c.BaseURL, c.InstallationID)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return token{}, fmt.Errorf("GitHub App token request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+signed)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	resp, err := t.client.Do(req)
	if err != nil {
		return token{}, fmt.Errorf("GitHub App %d installation %d: token request to %s: %w", c.AppID, c.InstallationID, c.BaseURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return token{}, fmt.Errorf("GitHub App %d installation %d: read the token answer: %w", c.AppID, c.InstallationID, err)
	}
	if resp.StatusCode != http.StatusCreated {
		return token{}, fmt.Errorf("GitHub App %d installation %d: %s answered %s to the token request%s",
			c.AppID, c.InstallationID, c.BaseURL, resp.Status, githubMessage(body))
	}
	var answer struct {
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&answer); err != nil || answer.Token == "" || answer.ExpiresAt.IsZero() {
		return token{}, fmt.Errorf("GitHub App %d installation %d: the token answer has no token and expiry", c.AppID, c.InstallationID)
	}
	return token{value: answer.Token, expires: answer.ExpiresAt}, nil
}

// githubMessage is the "message" of a GitHub error answer, bounded and
// on one line, for the condition; "" when there is none.
func githubMessage(body []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) != nil || e.Message == "" {
		return ""
	}
	m := strings.Join(strings.Fields(e.Message), " ")
	if len(m) > 200 {
		m = m[:200] + "…"
	}
	return ": " + m
}

// Resolve returns a Secret's data as Git and the forge API take it: for
// GitHub App credentials, username x-access-token and the installation
// token as password (and no private key); anything else unchanged.
func (t *Tokens) Resolve(ctx context.Context, data map[string][]byte) (map[string][]byte, error) {
	if !Has(data) {
		return data, nil
	}
	c, err := FromSecret(data)
	if err != nil {
		return nil, err
	}
	tok, err := t.Token(ctx, c)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{"username": []byte(TokenUser), "password": []byte(tok)}
	if w := data["webhookSecret"]; len(w) > 0 {
		out["webhookSecret"] = w
	}
	return out, nil
}
