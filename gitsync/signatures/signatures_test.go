package signatures

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/knitops/knit/gitsync/signatures/signtest"
)

// commitWith makes a commit in a fresh in-memory repository, signed by
// signer (nil: unsigned), and reads it back as the reconciler does.
func commitWith(t testing.TB, signer git.Signer) *object.Commit {
	t.Helper()
	fs := memfs.New()
	r, err := git.Init(memory.NewStorage(), fs)
	if err != nil {
		t.Fatal(err)
	}
	w, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create("README.md")
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("# signed\n"))
	f.Close()
	if _, err := w.Add("README.md"); err != nil {
		t.Fatal(err)
	}
	h, err := w.Commit("Signed", &git.CommitOptions{Signer: signer,
		Author: &object.Signature{Name: "Ada", Email: "ada@example.com", When: time.Unix(1700000000, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.CommitObject(h)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestVerify(t *testing.T) {
	ada := signtest.MustPGP(t, "Ada", "ada@example.com")
	eve := signtest.MustPGP(t, "Eve", "eve@example.com")
	adaSSH := signtest.MustSSH(t)
	eveSSH := signtest.MustSSH(t)
	adaPublic := ada.MustPublic(t)
	keys, err := FromSecret("Secret ns/trusted", map[string][]byte{
		"ada.asc":         adaPublic,
		AllowedSignersKey: []byte("# the team\n" + adaSSH.AllowedSigner("ada@example.com", `namespaces="git"`) + eveSSH.AllowedSigner("eve@example.com", `namespaces="file"`)),
	})
	if err != nil {
		t.Fatal(err)
	}
	tampered := commitWith(t, ada)
	tampered.Message = "Not what was signed"

	for _, tc := range []struct {
		name   string
		commit *object.Commit
		signer string   // want, when trusted
		why    []string // want, when refused
	}{
		{name: "OpenPGP, trusted", commit: commitWith(t, ada), signer: "(Ada <ada@example.com>)"},
		{name: "SSH, trusted", commit: commitWith(t, adaSSH), signer: "SSH key " + adaSSH.Fingerprint() + " (ada@example.com)"},
		{name: "unsigned", commit: commitWith(t, nil), why: []string{"is not signed", "Secret ns/trusted"}},
		{name: "OpenPGP, unknown key", commit: commitWith(t, eve), why: []string{"is signed by OpenPGP key", "which Secret ns/trusted does not hold"}},
		{name: "SSH, unknown key", commit: commitWith(t, signtest.MustSSH(t)), why: []string{"is signed by SSH key SHA256:", "does not allow for git"}},
		{name: "SSH, allowed for files only", commit: commitWith(t, eveSSH), why: []string{"is signed by SSH key " + eveSSH.Fingerprint()}},
		{name: "OpenPGP, changed after signing", commit: tampered, why: []string{"OpenPGP signature by key", "does not verify"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			who, err := keys.Verify(tc.commit)
			if tc.why == nil {
				if err != nil || !strings.Contains(who, tc.signer) {
					t.Fatalf("Verify = %q, %v; want signed by %q", who, err, tc.signer)
				}
				return
			}
			if !errors.Is(err, ErrNotTrusted) {
				t.Fatalf("Verify = %q, %v; want ErrNotTrusted", who, err)
			}
			for _, w := range tc.why {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), tc.commit.Hash.String()[:7]) {
				t.Errorf("error %q does not name the commit", err)
			}
		})
	}
}

func TestFromSecretRefuses(t *testing.T) {
	k := signtest.MustSSH(t)
	for _, tc := range []struct {
		name string
		data map[string][]byte
		want string
	}{
		{"empty", map[string][]byte{}, "holds no key"},
		{"not a key", map[string][]byte{"ada.asc": []byte("hello")}, "key ada.asc of Secret ns/s is not an ASCII-armored OpenPGP public key"},
		{"a CA", map[string][]byte{AllowedSignersKey: []byte(k.AllowedSigner("*@example.com", "cert-authority"))}, "line 1: option cert-authority is not supported"},
		{"a validity window", map[string][]byte{AllowedSignersKey: []byte(k.AllowedSigner("a", `valid-after="20240101"`))}, "option valid-after is not supported"},
		{"no key", map[string][]byte{AllowedSignersKey: []byte("ada@example.com\n")}, "want principals, then a key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromSecret("Secret ns/s", tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
