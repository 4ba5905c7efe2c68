package forge

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestVerifyHMACSHA256(t *testing.T) {
	secret, body := []byte("s3cret"), []byte(`{"ref":"refs/heads/main"}`)
	good := SignHMACSHA256(secret, body)
	cases := []struct {
		name string
		sig  string
		want error
	}{
		{"good with prefix", good, nil},
		{"good without prefix (Gitea)", strings.TrimPrefix(good, "sha256="), nil},
		{"good in upper case", "sha256=" + strings.ToUpper(strings.TrimPrefix(good, "sha256=")), nil},
		{"missing", "", ErrMissingSignature},
		{"other secret", SignHMACSHA256([]byte("other"), body), ErrBadSignature},
		{"other body", SignHMACSHA256(secret, []byte(`{}`)), ErrBadSignature},
		{"not hex", "sha256=zzzz", ErrBadSignature},
		{"truncated", good[:len(good)-2], ErrBadSignature},
		{"sha1 scheme", "sha1=" + strings.TrimPrefix(good, "sha256="), ErrBadSignature},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyHMACSHA256(secret, body, tc.sig)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("VerifyHMACSHA256(%q) = %v, want %v", tc.sig, err, tc.want)
			}
		})
	}
}

func TestVerifyToken(t *testing.T) {
	cases := []struct {
		name  string
		token string
		want  error
	}{
		{"good", "glpat-hook-token", nil},
		{"missing", "", ErrMissingSignature},
		{"wrong", "glpat-hook-tokeN", ErrBadSignature},
		{"prefix of secret", "glpat-hook", ErrBadSignature},
		{"secret plus suffix", "glpat-hook-token ", ErrBadSignature},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyToken([]byte("glpat-hook-token"), tc.token)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("VerifyToken(%q) = %v, want %v", tc.token, err, tc.want)
			}
		})
	}
}

// TestForgeVerify checks each forge reads its own header and nothing else.
func TestForgeVerify(t *testing.T) {
	secret, body := []byte("s3cret"), []byte(`{"kind":"push"}`)
	sig := SignHMACSHA256(secret, body)
	hexSig := strings.TrimPrefix(sig, "sha256=")
	cases := []struct {
		forge   Forge
		headers map[string]string
		want    error
	}{
		{ForgeGitHub, map[string]string{"X-Hub-Signature-256": sig}, nil},
		{ForgeGitHub, map[string]string{"X-Hub-Signature": "sha1=00"}, ErrMissingSignature},
		{ForgeGitHub, map[string]string{"X-Hub-Signature-256": SignHMACSHA256([]byte("nope"), body)}, ErrBadSignature},
		{ForgeGitLab, map[string]string{"X-Gitlab-Token": "s3cret"}, nil},
		{ForgeGitLab, map[string]string{"X-Gitlab-Token": "S3cret"}, ErrBadSignature},
		{ForgeGitLab, map[string]string{"X-Hub-Signature-256": sig}, ErrMissingSignature},
		{ForgeGitea, map[string]string{"X-Gitea-Signature": hexSig}, nil},
		{ForgeGitea, map[string]string{"X-Forgejo-Signature": hexSig}, nil},
		{ForgeGitea, map[string]string{"X-Gitea-Signature": "00" + hexSig[2:]}, ErrBadSignature},
		{ForgeGitea, map[string]string{}, ErrMissingSignature},
		{ForgeGeneric, map[string]string{"X-Knit-Signature-256": sig}, nil},
		{ForgeGeneric, map[string]string{"X-Knit-Signature-256": hexSig}, nil},
		{ForgeGeneric, map[string]string{"X-Hub-Signature-256": sig}, ErrMissingSignature},
		{ForgeGeneric, map[string]string{"X-Knit-Signature-256": "sha256="}, ErrBadSignature},
	}
	for _, tc := range cases {
		h := http.Header{}
		for k, v := range tc.headers {
			h.Set(k, v)
		}
		err := forges[tc.forge].verify(h, body, secret, time.Now())
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%s verify with %v = %v, want %v", tc.forge, tc.headers, err, tc.want)
		}
	}
}
