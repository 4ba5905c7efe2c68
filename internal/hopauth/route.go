package hopauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RouteHeader carries the ingress's signature of the Revision it routed a
// request to. The activator serves a request only with a valid one and
// removes it before the request goes on.
const RouteHeader = "Knit-Route-Signature"

// MaxSkew is how far a route signature's second may be from the
// verifier's clock: clock skew between nodes, plus the longest a signed
// request could take to reach the activator.
const MaxSkew = 5 * time.Minute

// routeVersion starts every signature, so the format can change.
const routeVersion = "v1"

// SignRoute is the RouteHeader value saying the ingress routed a request
// to namespace/revision at now: "v1.<unix second>.<mac>".
func (k *Keyring) SignRoute(namespace, revision string, now time.Time) string {
	ts := strconv.FormatInt(now.Unix(), 10)
	return routeVersion + "." + ts + "." + routeMAC(k.current()[0], namespace, revision, ts)
}

func routeMAC(key []byte, namespace, revision, ts string) string {
	m := hmac.New(sha256.New, key)
	// NUL cannot occur in a namespace, a Revision name or a number, so
	// no two inputs share a message.
	for _, part := range []string{"knit-hop-route/v1", namespace, revision, ts} {
		m.Write([]byte(part))
		m.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckRoute says whether sig is a signature of namespace/revision, by any
// key, within MaxSkew of now.
func (k *Keyring) CheckRoute(sig, namespace, revision string, now time.Time) error {
	ts, mac, ok := parseRoute(sig)
	if !ok {
		return fmt.Errorf("%w: %s is not a route signature", ErrUnauthenticated, RouteHeader)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s has no time", ErrUnauthenticated, RouteHeader)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > MaxSkew || d < -MaxSkew {
		return fmt.Errorf("%w: %s is %s from now, more than %s", ErrUnauthenticated, RouteHeader, d.Round(time.Second), MaxSkew)
	}
	for _, key := range k.current() {
		if hmac.Equal([]byte(routeMAC(key, namespace, revision, ts)), []byte(mac)) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s does not sign %s/%s", ErrUnauthenticated, RouteHeader, namespace, revision)
}

func parseRoute(sig string) (ts, mac string, ok bool) {
	rest, ok := strings.CutPrefix(sig, routeVersion+".")
	if !ok {
		return "", "", false
	}
	ts, mac, ok = strings.Cut(rest, ".")
	return ts, mac, ok && ts != "" && mac != ""
}
