package render

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/knitops/knit/gitsync/decryption"
)

// DecryptedFromAnnotation marks an object that a SOPS-encrypted file of
// the commit held: its value is that file's path. Render sets it; a
// commit that sets it itself is refused, so an object carrying it was
// encrypted in Git.
const DecryptedFromAnnotation = "knit.dev/decrypted-from"

// Decrypter decrypts a SOPS-encrypted file of the commit, named by its
// path in the repository, in memory (decryption.Decryptor).
type Decrypter interface {
	Decrypt(name string, data []byte) ([]byte, error)
}

// decrypt returns the plain text of the file at p when it is
// SOPS-encrypted, data itself when it is not. Documents of a decrypted
// YAML or JSON file are marked with the render's nonce, which settle
// turns into DecryptedFromAnnotation once kustomize is done.
func (r *repo) decrypt(p string, data []byte) ([]byte, error) {
	if !decryption.Encrypted(p, data) {
		return data, nil
	}
	if r.decrypter == nil {
		return nil, invalid(p, errors.New("the file is SOPS-encrypted and this GitRepository has no spec.decryption: name the Secret holding its age identity there"))
	}
	plain, err := r.decrypter.Decrypt(p, data)
	if err != nil {
		return nil, invalid(p, err)
	}
	if path.Ext(p) == ".env" {
		return plain, nil
	}
	marked, err := markDocuments(plain, r.nonce+":"+p)
	if err != nil {
		return nil, invalid(p, fmt.Errorf("decrypted file: %w", err))
	}
	return marked, nil
}

// markDocuments sets DecryptedFromAnnotation to value on every document
// of a YAML stream that is an object (has a kind).
func markDocuments(data []byte, value string) ([]byte, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if n.GetKind() == "" {
			continue
		}
		if err := n.PipeE(yaml.SetAnnotation(DecryptedFromAnnotation, value)); err != nil {
			return nil, err
		}
	}
	var out bytes.Buffer
	if err := (kio.ByteWriter{Writer: &out}).Write(nodes); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func newNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand never fails on the platforms Go supports
	return hex.EncodeToString(b)
}

// settle turns the render's marks into DecryptedFromAnnotation and
// refuses an object whose mark the commit wrote itself.
func settle(objs []*unstructured.Unstructured, nonce string) error {
	for _, o := range objs {
		v, ok := o.GetAnnotations()[DecryptedFromAnnotation]
		if !ok {
			continue
		}
		file, mine := strings.CutPrefix(v, nonce+":")
		if !mine {
			return invalid("", fmt.Errorf("%s %s carries annotation %s, which knit sets on objects it decrypted: remove it", o.GetKind(), o.GetName(), DecryptedFromAnnotation))
		}
		a := o.GetAnnotations()
		a[DecryptedFromAnnotation] = file
		o.SetAnnotations(a)
	}
	return nil
}
