package signatures

import (
	"testing"

	"github.com/knitops/knit/gitsync/signatures/signtest"
)

// FuzzAllowedSigners: an allowed signers file from a Secret parses or is
// refused, never panics.
func FuzzAllowedSigners(f *testing.F) {
	k := signtest.MustSSH(f)
	f.Add([]byte(k.AllowedSigner("ada@example.com", `namespaces="git,file"`)))
	f.Add([]byte("# c\n\n" + k.AllowedSigner("a,b", "")))
	f.Add([]byte("a cert-authority ssh-ed25519 AAAA\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseAllowedSigners(data)
	})
}

// FuzzVerify: whatever signature a pushed commit carries, Verify trusts
// it only if it verifies, and never panics.
func FuzzVerify(f *testing.F) {
	ada := signtest.MustPGP(f, "Ada", "ada@example.com")
	adaSSH := signtest.MustSSH(f)
	pub := ada.MustPublic(f)
	keys, err := FromSecret("Secret ns/k", map[string][]byte{"ada.asc": pub, AllowedSignersKey: []byte(adaSSH.AllowedSigner("ada", ""))})
	if err != nil {
		f.Fatal(err)
	}
	c := commitWith(f, nil)
	c.Message = "Another commit than the seeds signed"
	for _, signed := range []string{commitWith(f, ada).PGPSignature, commitWith(f, adaSSH).PGPSignature, "", "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n"} {
		f.Add(signed)
	}
	f.Fuzz(func(t *testing.T, sig string) {
		c := *c
		c.PGPSignature = sig
		if who, err := keys.Verify(&c); err == nil {
			t.Fatalf("a fuzzed signature over another commit was trusted as %s", who)
		}
	})
}
