package githubapp_test

import (
	"context"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/knitops/knit/gitsync/githubapp"
	"github.com/knitops/knit/gitsync/githubapp/githubapptest"
)

func TestResolveExchangesAndCaches(t *testing.T) {
	f := githubapptest.New(t)
	tokens := githubapp.New(f.Client())
	ctx := context.Background()
	secret := f.Secret()
	secret["webhookSecret"] = []byte("hook")
	got, err := tokens.Resolve(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if string(got["username"]) != githubapp.TokenUser || string(got["password"]) != "ghs_token1" || string(got["webhookSecret"]) != "hook" || got[githubapp.KeyPrivateKey] != nil {
		t.Fatalf("Resolve = %q, want x-access-token, the token, the webhook secret and no key", got)
	}
	if _, err := tokens.Resolve(ctx, f.Secret()); err != nil || f.Asked.Load() != 1 {
		t.Fatalf("second Resolve asked GitHub again (%d asks, %v): the token has an hour left", f.Asked.Load(), err)
	}

	// A token with less than five minutes left is replaced.
	f.SetLifetime(4 * time.Minute)
	tokens = githubapp.New(f.Client())
	for i, want := range []string{"ghs_token2", "ghs_token3"} {
		got, err = tokens.Resolve(ctx, f.Secret())
		if err != nil || string(got["password"]) != want {
			t.Fatalf("Resolve %d of a token about to expire = %q, %v; want %s", i, got["password"], err, want)
		}
	}

	plain := map[string][]byte{"username": []byte("u"), "password": []byte("p")}
	if got, err := tokens.Resolve(ctx, plain); err != nil || string(got["password"]) != "p" {
		t.Fatalf("Resolve changed a Secret without app credentials: %q, %v", got, err)
	}
}

func TestResolveRefuses(t *testing.T) {
	f := githubapptest.New(t)
	ctx := context.Background()
	f.Deny(true)
	_, err := githubapp.New(f.Client()).Resolve(ctx, f.Secret())
	if err == nil || !strings.Contains(err.Error(), "GitHub App 1234 installation 42") || !strings.Contains(err.Error(), "401 Unauthorized to the token request: A JSON web token could not be decoded") {
		t.Fatalf("err = %v", err)
	}
	f.Deny(false)
	for _, tc := range []struct {
		name  string
		edit  func(map[string][]byte)
		want  string
		never string
	}{
		{"no app id", func(d map[string][]byte) { d[githubapp.KeyAppID] = []byte("abc") }, "githubAppID must be the app's number", ""},
		{"no installation", func(d map[string][]byte) { delete(d, githubapp.KeyInstallationID) }, "githubAppInstallationID must be", ""},
		{"not a key", func(d map[string][]byte) { d[githubapp.KeyPrivateKey] = []byte("SECRETSTUFF") }, "githubAppPrivateKey is not a PEM private key", "SECRETSTUFF"},
		{"not RSA", func(d map[string][]byte) {
			d[githubapp.KeyPrivateKey] = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("SECRETSTUFF")})
		}, "not an RSA private key", "SECRETSTUFF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := f.Secret()
			tc.edit(d)
			_, err := githubapp.New(f.Client()).Resolve(ctx, d)
			if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.never != "" && strings.Contains(err.Error(), tc.never)) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
