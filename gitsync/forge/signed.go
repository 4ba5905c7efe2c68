package forge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks headers, which GitLab sends when a hook has a signing
// token: webhook-signature is "v1,<base64 HMAC-SHA256>" (several,
// space-separated, during a key rotation) of "<webhook-id>.<webhook-timestamp>.<body>".
const (
	headerWebhookID        = "webhook-id"
	headerWebhookTimestamp = "webhook-timestamp"
	headerWebhookSignature = "webhook-signature"
)

// SigningSecretPrefix marks a webhook secret as a Standard Webhooks
// signing key: "whsec_" and the key in base64. For GitLab, a secret of
// this form turns on signed verification, and the bare X-Gitlab-Token is
// no longer accepted.
const SigningSecretPrefix = "whsec_"

// SignatureTolerance is how far a signed timestamp may be from knit's
// clock. Deliveries older than this are refused whatever their
// signature, so a captured one cannot be replayed after the window; the
// dedupe window covers the replays inside it.
const SignatureTolerance = 5 * time.Minute

// ErrStaleSignature: a signed timestamp outside SignatureTolerance.
var ErrStaleSignature = errors.New("signed timestamp outside the accepted window")

// isSigningSecret says whether secret asks for Standard Webhooks signatures.
func isSigningSecret(secret []byte) bool {
	return strings.HasPrefix(string(secret), SigningSecretPrefix)
}

// signingKeys are the HMAC keys a signing secret may mean: the decoded
// base64 after the prefix, as the Standard Webhooks specification says,
// and the secret's bytes as typed, for a sender that uses them raw.
func signingKeys(secret []byte) [][]byte {
	keys := [][]byte{secret}
	if k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(string(secret), SigningSecretPrefix)); err == nil && len(k) > 0 {
		keys = append([][]byte{k}, keys...)
	}
	return keys
}

// VerifyStandardWebhook checks a Standard Webhooks delivery: the id,
// timestamp and signature headers are present, the timestamp is within
// SignatureTolerance of now, and one v1 signature is the HMAC-SHA256 of
// "<id>.<timestamp>.<body>" under the secret. Comparisons are constant-time.
func VerifyStandardWebhook(h http.Header, body, secret []byte, now time.Time) error {
	id, ts, sigs := h.Get(headerWebhookID), h.Get(headerWebhookTimestamp), h.Get(headerWebhookSignature)
	if id == "" || ts == "" || sigs == "" {
		return fmt.Errorf("%w: %s, %s and %s are required", ErrMissingSignature, headerWebhookID, headerWebhookTimestamp, headerWebhookSignature)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s %q is not Unix seconds", ErrBadSignature, headerWebhookTimestamp, ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > SignatureTolerance || d < -SignatureTolerance {
		return fmt.Errorf("%w: %s is %s from now", ErrStaleSignature, headerWebhookTimestamp, d.Round(time.Second))
	}
	signed := make([]byte, 0, len(id)+len(ts)+len(body)+2)
	signed = append(append(append(append(append(signed, id...), '.'), ts...), '.'), body...)
	for _, key := range signingKeys(secret) {
		mac := hmac.New(sha256.New, key)
		mac.Write(signed)
		want := mac.Sum(nil)
		for _, s := range strings.Fields(sigs) {
			v, b64, ok := strings.Cut(s, ",")
			if !ok || v != "v1" {
				continue
			}
			got, err := base64.StdEncoding.DecodeString(b64)
			if err == nil && hmac.Equal(got, want) {
				return nil
			}
		}
	}
	return ErrBadSignature
}

// SignStandardWebhook returns the webhook-signature value for a delivery:
// what GitLab sends, for tests and senders.
func SignStandardWebhook(secret []byte, id string, ts time.Time, body []byte) string {
	key := signingKeys(secret)[0]
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, ts.Unix())
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
