package source

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/knitops/knit/gitsync/egress"
	"github.com/knitops/knit/gitsync/source/sshgittest"
)

func TestSSHURLs(t *testing.T) {
	for _, tc := range []struct {
		raw, canonical string
		ssh, secret    bool
	}{
		{"git@github.com:org/app.git", "ssh://git@github.com/org/app.git", true, false},
		{"github.com:org/app.git", "ssh://github.com/org/app.git", true, false},
		{"ssh://git@git.example:2222/org/app.git", "ssh://git@git.example:2222/org/app.git", true, false},
		{"ssh://git:hunter2@git.example/app.git", "ssh://git:hunter2@git.example/app.git", true, true},
		{"git@[::1]:app.git", "ssh://git@[::1]/app.git", true, false},
		{"https://github.com/org/app.git", "https://github.com/org/app.git", false, false},
		{"https://me@github.com/org/app.git", "https://me@github.com/org/app.git", false, true},
		{"/srv/git/app", "/srv/git/app", false, false},
		{"./app:v1", "./app:v1", false, false},
	} {
		if got := IsSSH(tc.raw); got != tc.ssh {
			t.Errorf("IsSSH(%q) = %v", tc.raw, got)
		}
		if got := SSHURL(tc.raw); got != tc.canonical {
			t.Errorf("SSHURL(%q) = %q, want %q", tc.raw, got, tc.canonical)
		}
		if got := CarriesCredentials(tc.raw); got != tc.secret {
			t.Errorf("CarriesCredentials(%q) = %v", tc.raw, got)
		}
	}
}

func TestFetchOverSSH(t *testing.T) {
	dir, git := gitRepo(t)
	writeFile(t, dir, "a.txt", "a\n")
	git("add", ".")
	git("commit", "-qm", "a")
	head := git("rev-parse", "HEAD")

	identity, authorized := sshgittest.NewKey(t)
	srv := sshgittest.New(t, filepath.Dir(dir), authorized)
	url := "ssh://git@" + srv.Addr + "/" + filepath.Base(dir) + "/.git"
	secret := map[string][]byte{SecretIdentity: identity, SecretKnownHosts: []byte(srv.KnownHosts())}

	allowed, err := egress.ParseRules(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	allow := &egress.Policy{Allow: allowed}
	c := &Cache{Dir: t.TempDir(), Egress: func() *egress.Policy { return allow }}

	auth, err := SSHAuthFromSecret(url, secret, allow)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Fetch(context.Background(), "default/ssh", url, []string{"main"}, auth)
	if err != nil {
		t.Fatal(err)
	}
	if got.Heads["main"] != head {
		t.Fatalf("heads = %v, want main at %s", got.Heads, head)
	}

	t.Run("a host key known_hosts does not hold is refused before authenticating", func(t *testing.T) {
		other := sshgittest.New(t, filepath.Dir(dir), authorized)
		wrong := map[string][]byte{SecretIdentity: secret[SecretIdentity],
			SecretKnownHosts: []byte(knownhosts.Line([]string{knownhosts.Normalize(srv.Addr)}, other.HostKey) + "\n")}
		auth, err := SSHAuthFromSecret(url, wrong, allow)
		if err != nil {
			t.Fatal(err)
		}
		before := srv.Attempts.Load()
		_, err = (&Cache{Dir: t.TempDir(), Egress: func() *egress.Policy { return allow }}).Fetch(context.Background(), "default/ssh", url, []string{"main"}, auth)
		if err == nil || !strings.Contains(err.Error(), "is not in the Secret's known_hosts: refusing to authenticate") {
			t.Fatalf("fetch with the wrong host key: %v", err)
		}
		if n := srv.Attempts.Load() - before; n != 0 {
			t.Errorf("the server saw %d authentication attempts", n)
		}
	})

	t.Run("an address the egress policy refuses gets no authentication", func(t *testing.T) {
		auth, err := SSHAuthFromSecret(url, secret, &egress.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		before := srv.Attempts.Load()
		_, err = (&Cache{Dir: t.TempDir(), Egress: func() *egress.Policy { return allow }}).Fetch(context.Background(), "default/ssh", url, []string{"main"}, auth)
		if err == nil || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("fetch from a refused address: %v", err)
		}
		if n := srv.Attempts.Load() - before; n != 0 {
			t.Errorf("the server saw %d authentication attempts", n)
		}
	})

	t.Run("a Secret without known_hosts or identity is refused", func(t *testing.T) {
		for key, want := range map[string]string{SecretKnownHosts: "needs the Secret's known_hosts", SecretIdentity: "needs the Secret's identity"} {
			d := map[string][]byte{SecretIdentity: secret[SecretIdentity], SecretKnownHosts: secret[SecretKnownHosts]}
			delete(d, key)
			if _, err := SSHAuthFromSecret(url, d, allow); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("without %s: %v, want %q", key, err, want)
			}
		}
	})
}

// FuzzSSHURL: whatever spec.url says, the SSH spellings agree with each
// other and never panic.
func FuzzSSHURL(f *testing.F) {
	for _, s := range []string{"git@github.com:org/app.git", "ssh://git@h:22/a", "https://h/a", "/srv/a", "a:b", "[::1]:x", "u@[::1]:/abs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		canonical := SSHURL(raw)
		if IsSSH(raw) && !strings.HasPrefix(strings.ToLower(canonical), "ssh://") {
			t.Fatalf("IsSSH(%q) but SSHURL = %q", raw, canonical)
		}
		if IsSSH(raw) && !IsSSH(canonical) {
			t.Fatalf("SSHURL(%q) = %q is not SSH", raw, canonical)
		}
		_ = CarriesCredentials(raw)
	})
}
