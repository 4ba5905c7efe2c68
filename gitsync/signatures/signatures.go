package signatures

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// AllowedSignersKey is the key of a verification Secret that holds SSH
// allowed signers, in ssh-keygen's format (ALLOWED SIGNERS in
// ssh-keygen(1)); every other key holds ASCII-armored OpenPGP public keys.
const AllowedSignersKey = "allowed_signers"

// gitNamespace is the SSH signature namespace git signs commits in.
const gitNamespace = "git"

// ErrNotTrusted marks a commit that is not signed by a trusted key: the
// commit's problem (or the Secret's), not one to retry.
var ErrNotTrusted = errors.New("commit not signed by a trusted key")

// refusal is a commit refused for its signature; it matches ErrNotTrusted
// without saying so in its message, which is a sentence of its own.
type refusal struct{ msg string }

func (r *refusal) Error() string        { return r.msg }
func (r *refusal) Is(target error) bool { return target == ErrNotTrusted }

func refuse(format string, args ...any) error {
	return &refusal{msg: fmt.Sprintf(format, args...)}
}

// Keys are the signers one repository trusts.
type Keys struct {
	pgp    openpgp.EntityList
	ssh    []allowedSigner
	source string // the Secret, as errors name it
}

// FromSecret reads a verification Secret's data: OpenPGP public keys
// (armored) under any key but AllowedSignersKey, SSH allowed signers
// under it. source names the Secret in errors.
func FromSecret(source string, data map[string][]byte) (*Keys, error) {
	k := &Keys{source: source}
	names := make([]string, 0, len(data))
	for n := range data {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if n == AllowedSignersKey {
			signers, err := ParseAllowedSigners(data[n])
			if err != nil {
				return nil, fmt.Errorf("key %s of %s: %w", n, source, err)
			}
			k.ssh = append(k.ssh, signers...)
			continue
		}
		el, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(data[n]))
		if err != nil {
			return nil, fmt.Errorf("key %s of %s is not an ASCII-armored OpenPGP public key (gpg --export --armor), nor %s: %v", n, source, AllowedSignersKey, err)
		}
		k.pgp = append(k.pgp, el...)
	}
	if len(k.pgp) == 0 && len(k.ssh) == 0 {
		return nil, fmt.Errorf("%s holds no key: add OpenPGP public keys (gpg --export --armor) or SSH allowed signers under %s", source, AllowedSignersKey)
	}
	return k, nil
}

// Verify checks that c is signed by one of k's keys and returns who
// signed it. An error matching ErrNotTrusted says why not: unsigned,
// signed by a key k does not hold (named), or a signature that does not
// match the commit.
func (k *Keys) Verify(c *object.Commit) (string, error) {
	short := c.Hash.String()[:7]
	if strings.TrimSpace(c.PGPSignature) == "" {
		return "", refuse("commit %s is not signed, and spec.verify trusts only commits signed by a key of %s", short, k.source)
	}
	signed, err := signedBytes(c)
	if err != nil {
		return "", err
	}
	sig := c.PGPSignature
	switch {
	case strings.HasPrefix(strings.TrimSpace(sig), "-----BEGIN SSH SIGNATURE-----"):
		return k.verifySSH(short, signed, []byte(sig))
	case strings.HasPrefix(strings.TrimSpace(sig), "-----BEGIN PGP SIGNATURE-----"):
		return k.verifyPGP(short, signed, sig)
	}
	return "", refuse("commit %s carries a signature knit cannot read (neither OpenPGP nor SSH; X.509 signatures are not supported)", short)
}

// signedBytes are the bytes a commit's signature covers: the commit
// object as encoded without its signature header.
func signedBytes(c *object.Commit) ([]byte, error) {
	o := &plumbing.MemoryObject{}
	if err := c.EncodeWithoutSignature(o); err != nil {
		return nil, fmt.Errorf("encode commit %s: %w", c.Hash, err)
	}
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func (k *Keys) verifyPGP(short string, signed []byte, sig string) (string, error) {
	e, err := openpgp.CheckArmoredDetachedSignature(k.pgp, bytes.NewReader(signed), strings.NewReader(sig), nil)
	if err == nil {
		return "OpenPGP key " + describeEntity(e), nil
	}
	issuer := pgpIssuer(sig)
	if errors.Is(err, pgperrors.ErrUnknownIssuer) {
		return "", refuse("commit %s is signed by OpenPGP key %s, which %s does not hold", short, issuer, k.source)
	}
	return "", refuse("commit %s has an OpenPGP signature by key %s that does not verify (%v)", short, issuer, err)
}

// pgpIssuer names the key an armored signature says it was made with.
func pgpIssuer(sig string) string {
	block, err := armor.Decode(strings.NewReader(sig))
	if err != nil {
		return "(unreadable)"
	}
	p, err := packet.Read(block.Body)
	if err != nil {
		return "(unreadable)"
	}
	s, ok := p.(*packet.Signature)
	if !ok {
		return "(unreadable)"
	}
	if len(s.IssuerFingerprint) > 0 {
		return fmt.Sprintf("%X", s.IssuerFingerprint)
	}
	if s.IssuerKeyId != nil {
		return fmt.Sprintf("%016X", *s.IssuerKeyId)
	}
	return "(unnamed)"
}

func describeEntity(e *openpgp.Entity) string {
	id := fmt.Sprintf("%X", e.PrimaryKey.Fingerprint)
	for name := range e.Identities {
		return id + " (" + name + ")"
	}
	return id
}

func (k *Keys) verifySSH(short string, signed, armored []byte) (string, error) {
	sig, err := sshsig.Unarmor(armored)
	if err != nil {
		return "", refuse("commit %s carries an SSH signature knit cannot read (%v)", short, err)
	}
	fp := ssh.FingerprintSHA256(sig.PublicKey)
	for _, s := range k.ssh {
		if ssh.FingerprintSHA256(s.key) != fp || !s.allows(gitNamespace) {
			continue
		}
		if err := sshsig.Verify(bytes.NewReader(signed), sig, s.key, sig.HashAlgorithm, gitNamespace); err != nil {
			return "", refuse("commit %s has an SSH signature by %s that does not verify (%v)", short, fp, err)
		}
		return "SSH key " + fp + " (" + strings.Join(s.principals, ",") + ")", nil
	}
	return "", refuse("commit %s is signed by SSH key %s, which the %s of %s does not allow for git", short, fp, AllowedSignersKey, k.source)
}
