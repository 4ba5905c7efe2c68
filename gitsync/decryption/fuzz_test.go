package decryption

import (
	"testing"

	"github.com/knitops/knit/gitsync/decryption/sopstest"
)

// FuzzDecrypt feeds commit content to Decrypt: it must return an error or
// plain text, never panic, whatever a push holds.
func FuzzDecrypt(f *testing.F) {
	key, recipient, err := sopstest.NewIdentity()
	if err != nil {
		f.Fatal(err)
	}
	d, err := FromSecret("Secret ns/k", map[string][]byte{"k.agekey": []byte(key)})
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range []string{"s.yaml", "s.json", "s.env"} {
		plain := secretYAML
		switch name {
		case "s.json":
			plain = `{"a":"b"}`
		case "s.env":
			plain = "A=b\n"
		}
		enc, err := sopstest.Encrypt(name, []byte(plain), "", recipient)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(name, enc)
	}
	f.Add("x.yaml", []byte("sops:\n  lastmodified: x\n"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if Encrypted(name, data) {
			_, _ = d.Decrypt(name, data)
		}
		_, _ = d.Decrypt(name, data)
	})
}
