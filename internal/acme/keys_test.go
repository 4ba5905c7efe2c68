package acme

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"
)

func TestAccountKeyRoundTrips(t *testing.T) {
	key, err := NewAccountKey()
	if err != nil {
		t.Fatal(err)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		t.Fatalf("NewAccountKey = %T, want ECDSA P-256", key)
	}
	data, err := MarshalKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "-----BEGIN PRIVATE KEY-----\n") {
		t.Errorf("MarshalKey wrote %.30q…, want a PKCS#8 PEM block", data)
	}
	back, err := ParseKey(data)
	if err != nil {
		t.Fatalf("ParseKey(MarshalKey(key)): %v", err)
	}
	if !ec.Equal(back) {
		t.Error("the key read back differs")
	}
}

func TestParseKey(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sec1, _ := x509.MarshalECPrivateKey(p256)
	good := pkcs8PEM(t, p256)

	cases := []struct {
		name string
		data []byte
		// err is in the error; "" means ParseKey succeeds.
		err string
	}{
		{"ECDSA P-256", good, ""},
		{"ECDSA P-384", pkcs8PEM(t, p384), ""},
		{"RSA", pkcs8PEM(t, rsaKey), ""},
		{"surrounded by blank lines", append(append([]byte("\n\n"), good...), "\n  \n"...), ""},
		{"empty", nil, "no PEM block"},
		{"not PEM", []byte("hello"), "no PEM block"},
		{"SEC1 EC key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}), `"EC PRIVATE KEY" PEM block, want "PRIVATE KEY"`},
		{"certificate", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}}), `"CERTIFICATE" PEM block`},
		{"Ed25519", pkcs8PEM(t, edKey), "ed25519.PrivateKey keys cannot sign ACME requests"},
		{"ECDSA P-224", pkcs8PEM(t, p224), "P-224 cannot sign ACME requests"},
		{"two keys", append(append([]byte{}, good...), good...), "data after the key's PEM block"},
		{"garbage in the block", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("not DER at all")}), "parsing the PKCS#8 key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := ParseKey(tc.data)
			if tc.err == "" {
				if err != nil || key == nil {
					t.Fatalf("ParseKey = %v, %v", key, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("ParseKey error = %v, want one saying %q", err, tc.err)
			}
			assertNoKeyMaterial(t, tc.data, err.Error())
		})
	}
}

func pkcs8PEM(t testing.TB, key any) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// assertNoKeyMaterial fails when msg quotes the bytes of data's PEM block,
// raw or base64.
func assertNoKeyMaterial(t testing.TB, data []byte, msg string) {
	t.Helper()
	b, _ := pem.Decode(data)
	if b == nil || len(b.Bytes) < 8 {
		return
	}
	for _, s := range []string{string(b.Bytes), base64.StdEncoding.EncodeToString(b.Bytes)[:8]} {
		if strings.Contains(msg, s) {
			t.Fatalf("the error quotes the key: %q", msg)
		}
	}
}

func FuzzParseKey(f *testing.F) {
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	f.Add(pkcs8PEM(f, p256))
	f.Add(pkcs8PEM(f, edKey))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n"))
	f.Add([]byte("-----BEGIN EC PRIVATE KEY-----\n-----END EC PRIVATE KEY-----\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		key, err := ParseKey(data)
		if err != nil {
			if key != nil {
				t.Fatalf("ParseKey returned a key and an error: %v", err)
			}
			assertNoKeyMaterial(t, data, err.Error())
			return
		}
		again, err := MarshalKey(key)
		if err != nil {
			t.Fatalf("MarshalKey of a key ParseKey accepted: %v", err)
		}
		back, err := ParseKey(again)
		if err != nil {
			t.Fatalf("ParseKey(MarshalKey(ParseKey(data))): %v", err)
		}
		if !back.(interface{ Equal(crypto.PrivateKey) bool }).Equal(key) {
			t.Fatal("the key changed on a round trip")
		}
	})
}
