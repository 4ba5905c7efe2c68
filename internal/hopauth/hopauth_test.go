package hopauth

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func key(c byte) []byte { return []byte(strings.Repeat(string(c), MinKeyBytes)) }

func TestTokenOpensOnlyItsPurposeUnderAKnownKey(t *testing.T) {
	a, _ := NewKeyring(key('a'))
	rotated, _ := NewKeyring(key('b'), key('a')) // b signs, a still verifies
	other := Generate()
	tok := a.Token(PurposeAutoscaler)
	for _, tc := range []struct {
		name    string
		k       *Keyring
		purpose string
		tok     string
		ok      bool
	}{
		{"same key", a, PurposeAutoscaler, tok, true},
		{"old key during a rotation", rotated, PurposeAutoscaler, tok, true},
		{"another purpose", a, "other", tok, false},
		{"another cluster's key", other, PurposeAutoscaler, tok, false},
		{"empty", a, PurposeAutoscaler, "", false},
		{"truncated", a, PurposeAutoscaler, tok[:len(tok)-1], false},
	} {
		if err := tc.k.CheckToken(tc.purpose, tc.tok); (err == nil) != tc.ok {
			t.Errorf("%s: CheckToken = %v, want ok %t", tc.name, err, tc.ok)
		}
	}
}

func TestRequireTokenRefusesWithout(t *testing.T) {
	k := Generate()
	reached := 0
	srv := httptest.NewServer(k.RequireToken(PurposeAutoscaler, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached++ })))
	defer srv.Close()
	for _, auth := range []string{"", "Bearer ", "Bearer " + Generate().Token(PurposeAutoscaler), "Basic " + k.Token(PurposeAutoscaler)} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: %d, want 401", auth, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
	k.Authorize(req, PurposeAutoscaler)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || reached != 1 {
		t.Errorf("with the token: %d, handler reached %d times; want 200 once", resp.StatusCode, reached)
	}
}

func TestRouteSignatureBindsRevisionAndTime(t *testing.T) {
	k := Generate()
	now := time.Unix(1_800_000_000, 0)
	sig := k.SignRoute("default", "hello-00001", now)
	for _, tc := range []struct {
		name      string
		sig       string
		ns, rev   string
		at        time.Time
		wantValid bool
	}{
		{"as signed", sig, "default", "hello-00001", now, true},
		{"within the skew", sig, "default", "hello-00001", now.Add(MaxSkew), true},
		{"another revision", sig, "default", "hello-00002", now, false},
		{"another namespace", sig, "other", "hello-00001", now, false},
		{"names shifted across the separator", sig, "defaulth", "ello-00001", now, false},
		{"too old", sig, "default", "hello-00001", now.Add(MaxSkew + time.Second), false},
		{"from the future", sig, "default", "hello-00001", now.Add(-MaxSkew - time.Second), false},
		{"another key", Generate().SignRoute("default", "hello-00001", now), "default", "hello-00001", now, false},
		{"empty", "", "default", "hello-00001", now, false},
		{"garbage", "v1..", "default", "hello-00001", now, false},
	} {
		if err := k.CheckRoute(tc.sig, tc.ns, tc.rev, tc.at); (err == nil) != tc.wantValid {
			t.Errorf("%s: CheckRoute = %v, want valid %t", tc.name, err, tc.wantValid)
		}
	}
}

// A key added to the mounted Secret is used without a restart; a file
// broken meanwhile keeps the keys already loaded.
func TestLoadFileFollowsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys")
	write := func(content string, mod time.Time) {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Unix(1_800_000_000, 0)
	write(string(key('a'))+"\n\n", start)
	k, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	clock := start
	k.now = func() time.Time { return clock }
	old, _ := NewKeyring(key('a'))
	next, _ := NewKeyring(key('b'))

	write(string(key('b'))+"\n"+string(key('a'))+"\n", start.Add(time.Minute))
	clock = clock.Add(reloadEvery)
	if k.CheckToken(PurposeAutoscaler, next.Token(PurposeAutoscaler)) != nil || k.CheckToken(PurposeAutoscaler, old.Token(PurposeAutoscaler)) != nil {
		t.Error("after the rotation: want the new and the old key accepted")
	}
	if k.Token(PurposeAutoscaler) != next.Token(PurposeAutoscaler) {
		t.Error("after the rotation: want the new key signing")
	}
	write("short\n", start.Add(2*time.Minute))
	clock = clock.Add(reloadEvery)
	if k.CheckToken(PurposeAutoscaler, next.Token(PurposeAutoscaler)) != nil {
		t.Error("a broken file replaced the keys loaded")
	}
	if _, err := LoadFile(path); err == nil {
		t.Error("LoadFile accepted a key shorter than MinKeyBytes")
	}
}

func FuzzCheckRoute(f *testing.F) {
	k, _ := NewKeyring(key('a'))
	now := time.Unix(1_800_000_000, 0)
	f.Add(k.SignRoute("default", "hello", now), "default", "hello")
	f.Add("v1.1.x", "a", "b")
	f.Fuzz(func(t *testing.T, sig, ns, rev string) {
		if k.CheckRoute(sig, ns, rev, now) == nil && sig != k.SignRoute(ns, rev, now) {
			// Only a signature made with the key for these names and a
			// second within the skew passes; check the second is why.
			ts, _, _ := parseRoute(sig)
			if sig != routeVersion+"."+ts+"."+routeMAC(key('a'), ns, rev, ts) {
				t.Errorf("CheckRoute accepted %q for %s/%s", sig, ns, rev)
			}
		}
	})
}
