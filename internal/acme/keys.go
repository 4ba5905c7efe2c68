package acme

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// pemPrivateKey is the PEM block type of a PKCS#8 private key (RFC 7468
// §10), the one encoding that holds any key type, so a Secret written by
// MarshalKey says nothing about the algorithm inside.
const pemPrivateKey = "PRIVATE KEY"

// NewAccountKey makes an ACME account key: ECDSA P-256, which every ACME
// CA accepts (ES256) and which signs each request far faster than RSA.
// Keep it (MarshalKey) and reuse it: the key is the account, and a CA's
// rate limits count per account.
func NewAccountKey() (crypto.Signer, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("acme: generating an account key: %w", err)
	}
	return k, nil
}

// MarshalKey encodes a private key as a PKCS#8 "PRIVATE KEY" PEM block,
// for a Kubernetes Secret (ParseKey reads it back).
func MarshalKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("acme: encoding the key as PKCS#8: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemPrivateKey, Bytes: der}), nil
}

// ParseKey reads what MarshalKey wrote: one PKCS#8 "PRIVATE KEY" PEM
// block holding an ECDSA or RSA key, the kinds x/crypto/acme can sign
// with. Its errors describe the input's shape, never its bytes.
func ParseKey(data []byte) (crypto.Signer, error) {
	block, rest := pem.Decode(data)
	if block == nil {
		return nil, errors.New("acme: no PEM block in the key")
	}
	if block.Type != pemPrivateKey {
		return nil, fmt.Errorf("acme: the key is a %.40q PEM block, want %q (PKCS#8)", block.Type, pemPrivateKey)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, errors.New("acme: data after the key's PEM block")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("acme: parsing the PKCS#8 key: %w", err)
	}
	return acmeSigner(key)
}

// acmeSigner is key if ACME requests can be signed with it: RSA (RS256)
// or ECDSA on P-256, P-384 or P-521 (ES256, ES384, ES512).
func acmeSigner(key any) (crypto.Signer, error) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return k, nil
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256(), elliptic.P384(), elliptic.P521():
			return k, nil
		}
		return nil, fmt.Errorf("acme: ECDSA keys on %s cannot sign ACME requests (want P-256, P-384 or P-521)", k.Curve.Params().Name)
	}
	return nil, fmt.Errorf("acme: %T keys cannot sign ACME requests (want ECDSA or RSA)", key)
}
