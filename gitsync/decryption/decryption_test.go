package decryption

import (
	"errors"
	"strings"
	"testing"

	"github.com/knitops/knit/gitsync/decryption/sopstest"
)

const secretYAML = `apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: hunter2-plain
`

func identity(t *testing.T) (key, recipient string) {
	t.Helper()
	key, recipient, err := sopstest.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return key, recipient
}

func encrypt(t *testing.T, name, plain, regex string, recipients ...string) []byte {
	t.Helper()
	out, err := sopstest.Encrypt(name, []byte(plain), regex, recipients...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDecryptRoundTrips(t *testing.T) {
	key, recipient := identity(t)
	d, err := FromSecret("Secret ns/sops-age", map[string][]byte{"age.agekey": []byte(key), "README": []byte("not a key")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, plain, regex, want string }{
		{"secret.yaml", secretYAML, sopstest.KubernetesRegex, "password: hunter2-plain"},
		{"whole.yaml", secretYAML, "", "password: hunter2-plain"},
		{"config.json", `{"kind":"ConfigMap","data":{"token":"t0ken-plain"}}`, "", `"token": "t0ken-plain"`},
		{"app.env", "TOKEN=t0ken-plain\n", "", "TOKEN=t0ken-plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc := encrypt(t, tc.name, tc.plain, tc.regex, recipient)
			if strings.Contains(string(enc), "plain") {
				t.Fatalf("the encrypted file shows its value:\n%s", enc)
			}
			if !Encrypted(tc.name, enc) {
				t.Fatalf("Encrypted(%s) = false for\n%s", tc.name, enc)
			}
			if Encrypted(tc.name, []byte(tc.plain)) {
				t.Fatalf("Encrypted(%s) = true for the plain file", tc.name)
			}
			out, err := d.Decrypt(tc.name, enc)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "sops") {
				t.Fatalf("decrypted %s:\n%s\nwant it to hold %q and no sops metadata", tc.name, out, tc.want)
			}
		})
	}
}

func TestDecryptRefuses(t *testing.T) {
	key, recipient := identity(t)
	_, other := identity(t)
	d, err := FromSecret("Secret ns/sops-age", map[string][]byte{"age.agekey": []byte(key)})
	if err != nil {
		t.Fatal(err)
	}
	good := encrypt(t, "s.yaml", secretYAML, sopstest.KubernetesRegex, recipient)
	for _, tc := range []struct {
		name string
		data []byte
		want []string
		is   error
	}{
		{"another recipient", encrypt(t, "s.yaml", secretYAML, sopstest.KubernetesRegex, other),
			[]string{"s.yaml is encrypted for " + other, "Secret ns/sops-age holds identities for " + recipient}, ErrEncryptedFor},
		{"changed after encryption", []byte(strings.Replace(string(good), "name: db", "name: prod-db", 1)),
			[]string{"decrypt s.yaml with Secret ns/sops-age", "MAC mismatch"}, nil},
		{"not SOPS", []byte("a: [\n"), []string{"s.yaml is not a SOPS file"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := d.Decrypt("s.yaml", tc.data)
			if err == nil {
				t.Fatal("decrypted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error quotes the secret: %v", err)
			}
		})
	}
}

func TestFromSecretRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		data map[string][]byte
		want string
	}{
		{"no key", map[string][]byte{"identity": []byte("AGE-SECRET-KEY-1...")}, "has no key ending in .agekey"},
		{"not an identity", map[string][]byte{"age.agekey": []byte("AGE-SECRET-KEY-1SECRETSTUFF")}, "key age.agekey of Secret ns/k holds no valid age identity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromSecret("Secret ns/k", tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "SECRETSTUFF") {
				t.Fatalf("error quotes the Secret: %v", err)
			}
		})
	}
}
