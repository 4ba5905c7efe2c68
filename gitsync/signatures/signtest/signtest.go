// Package signtest makes signing keys and signed commits for tests, as
// git does with gpg and with gpg.format=ssh, through go-git's signers.
package signtest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// PGP is an OpenPGP signing key.
type PGP struct{ Entity *openpgp.Entity }

// NewPGP makes an OpenPGP key for name <email>.
func NewPGP(name, email string) (*PGP, error) {
	e, err := openpgp.NewEntity(name, "", email, nil)
	if err != nil {
		return nil, err
	}
	return &PGP{Entity: e}, nil
}

// Public is the key as `gpg --export --armor` writes it.
func (p *PGP) Public() ([]byte, error) {
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.PublicKeyType, nil)
	if err != nil {
		return nil, err
	}
	if err := p.Entity.Serialize(w); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Sign signs a commit's bytes as git's gpg signing does (go-git's
// Signer).
func (p *PGP) Sign(message io.Reader) ([]byte, error) {
	var b bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&b, p.Entity, message, nil); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// SSH is an SSH signing key.
type SSH struct {
	signer ssh.Signer
}

// NewSSH makes an ed25519 SSH key.
func NewSSH() (*SSH, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, err
	}
	return &SSH{signer: s}, nil
}

// AllowedSigner is the key's line of an allowed signers file for
// principal, with options ("" for none).
func (s *SSH) AllowedSigner(principal, options string) string {
	key := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.signer.PublicKey())))
	if options != "" {
		return principal + " " + options + " " + key + "\n"
	}
	return principal + " " + key + "\n"
}

// Fingerprint is the key's SHA256 fingerprint.
func (s *SSH) Fingerprint() string { return ssh.FingerprintSHA256(s.signer.PublicKey()) }

// Sign signs a commit's bytes as git's gpg.format=ssh signing does.
func (s *SSH) Sign(message io.Reader) ([]byte, error) {
	sig, err := sshsig.Sign(message, s.signer, sshsig.HashSHA512, "git")
	if err != nil {
		return nil, err
	}
	return sshsig.Armor(sig), nil
}

// MustPGP is NewPGP for a test, which it fails on an error.
func MustPGP(t testing.TB, name, email string) *PGP {
	t.Helper()
	p, err := NewPGP(name, email)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// MustSSH is NewSSH for a test, which it fails on an error.
func MustSSH(t testing.TB) *SSH {
	t.Helper()
	s, err := NewSSH()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// MustPublic is Public for a test, which it fails on an error.
func (p *PGP) MustPublic(t testing.TB) []byte {
	t.Helper()
	b, err := p.Public()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
