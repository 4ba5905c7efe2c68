package volumes

import (
	"context"
	"sync"
	"time"
)

// tokenRefreshAge is the share of a projected token's lifetime after which
// it is requested again, and tokenMaxAge the age at which it is whatever
// its lifetime: the kubelet's token manager rotates at 80% or 24 hours.
const (
	tokenRefreshAge = 0.8
	tokenMaxAge     = 24 * time.Hour
)

// A TokenCache keeps each service-account token a pod's volumes project
// until it is due, so that a resync rewrites a token only when the
// kubelet would rotate it. The zero value is ready to use.
type TokenCache struct {
	mu     sync.Mutex
	now    func() time.Time // time.Now when nil
	tokens map[tokenKey]cachedToken
}

type tokenKey struct {
	audience          string
	expirationSeconds int64
}

type cachedToken struct {
	token  []byte
	issued time.Time
}

// tokenDue says whether a token issued at issued for lifetime must be
// requested again at now.
func tokenDue(issued time.Time, lifetime time.Duration, now time.Time) bool {
	age := now.Sub(issued)
	return age >= time.Duration(float64(lifetime)*tokenRefreshAge) || age >= tokenMaxAge
}

// Through is src with its tokens served from the cache.
func (c *TokenCache) Through(src Sources) Sources {
	return cachedTokens{Sources: src, cache: c}
}

type cachedTokens struct {
	Sources
	cache *TokenCache
}

func (s cachedTokens) Token(ctx context.Context, audience string, expirationSeconds int64) ([]byte, error) {
	c := s.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	key := tokenKey{audience, expirationSeconds}
	if t, ok := c.tokens[key]; ok && !tokenDue(t.issued, time.Duration(expirationSeconds)*time.Second, now()) {
		return t.token, nil
	}
	issued := now()
	token, err := s.Sources.Token(ctx, audience, expirationSeconds)
	if err != nil {
		return nil, err
	}
	if c.tokens == nil {
		c.tokens = map[tokenKey]cachedToken{}
	}
	c.tokens[key] = cachedToken{token: token, issued: issued}
	return token, nil
}
