package forge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Verification failures; the Receiver answers 401 to all of them.
var (
	// ErrMissingSignature: the header that proves the sender knows the secret is absent.
	ErrMissingSignature = errors.New("missing signature")
	// ErrBadSignature: the signature or token does not match the secret.
	ErrBadSignature = errors.New("signature does not match")
)

// VerifyHMACSHA256 checks that sig, the lowercase or uppercase hex
// HMAC-SHA256 of body under secret, optionally prefixed with "sha256=" as
// GitHub and knit's generic hooks send it, is right. The comparison is
// constant-time.
func VerifyHMACSHA256(secret, body []byte, sig string) error {
	if sig == "" {
		return ErrMissingSignature
	}
	got, err := hex.DecodeString(strings.TrimPrefix(sig, "sha256="))
	if err != nil {
		return fmt.Errorf("%w: not hex: %v", ErrBadSignature, err)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return ErrBadSignature
	}
	return nil
}

// VerifyToken checks a shared-secret token such as GitLab's X-Gitlab-Token.
// Both sides are hashed before the constant-time comparison so that not
// even the secret's length leaks through timing.
func VerifyToken(secret []byte, token string) error {
	if token == "" {
		return ErrMissingSignature
	}
	want := sha256.Sum256(secret)
	got := sha256.Sum256([]byte(token))
	if !hmac.Equal(got[:], want[:]) {
		return ErrBadSignature
	}
	return nil
}

// SignHMACSHA256 returns "sha256=<hex>" for body under secret: the value
// of X-Hub-Signature-256 and X-Knit-Signature-256. Senders of generic
// webhooks and tests use it.
func SignHMACSHA256(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}
