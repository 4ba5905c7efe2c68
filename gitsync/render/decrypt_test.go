package render

import (
	"errors"
	"strings"
	"testing"

	"github.com/knitops/knit/gitsync/decryption"
	"github.com/knitops/knit/gitsync/decryption/sopstest"
)

const plainSecret = `apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: hunter2
`

const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: fast
`

func TestRenderDecrypts(t *testing.T) {
	key, recipient, err := sopstest.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	d, err := decryption.FromSecret("Secret ns/sops-age", map[string][]byte{"age.agekey": []byte(key)})
	if err != nil {
		t.Fatal(err)
	}
	encrypted := func(name, plain string) string {
		out, err := sopstest.Encrypt(name, []byte(plain), sopstest.KubernetesRegex, recipient)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	kustomization := "resources: [secret.yaml, settings.yaml]\nnamePrefix: prod-\nlabels: [{pairs: {team: a}}]\nconfigMapGenerator:\n- name: env\n  envs: [app.env]\n"
	env, err := sopstest.Encrypt("app.env", []byte("TOKEN=t0ken\n"), "", recipient)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"kustomization.yaml": kustomization,
		"secret.yaml":        encrypted("secret.yaml", plainSecret),
		"settings.yaml":      configMap,
		"app.env":            string(env),
	}

	t.Run("with the identity", func(t *testing.T) {
		objs, err := Options{Decrypter: d}.Render(commitTree(t, files, nil), ".")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]map[string]string{}
		for _, o := range objs {
			got[o.GetName()] = o.GetAnnotations()
		}
		// kustomize transformed the decrypted Secret like any object
		if got["prod-db"][DecryptedFromAnnotation] != "secret.yaml" {
			t.Errorf("prod-db annotations %v, want %s=secret.yaml", got["prod-db"], DecryptedFromAnnotation)
		}
		if _, ok := got["prod-settings"][DecryptedFromAnnotation]; ok {
			t.Errorf("a plain file's object is marked decrypted: %v", got["prod-settings"])
		}
		y := toYAML(t, objs)
		for _, want := range []string{"password: hunter2", "TOKEN: t0ken", "team: a"} {
			if !strings.Contains(y, want) {
				t.Errorf("rendered objects lack %q:\n%s", want, y)
			}
		}
		if strings.Contains(y, "sops") || strings.Contains(y, "ENC[") {
			t.Errorf("rendered objects keep SOPS's metadata or ciphertext:\n%s", y)
		}
	})

	t.Run("without spec.decryption", func(t *testing.T) {
		_, err := Options{}.Render(commitTree(t, files, nil), ".")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "secret.yaml: the file is SOPS-encrypted and this GitRepository has no spec.decryption") {
			t.Fatalf("error %v", err)
		}
	})

	t.Run("with another identity", func(t *testing.T) {
		otherKey, _, err := sopstest.NewIdentity()
		if err != nil {
			t.Fatal(err)
		}
		other, err := decryption.FromSecret("Secret ns/other", map[string][]byte{"age.agekey": []byte(otherKey)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Options{Decrypter: other}.Render(commitTree(t, files, nil), ".")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "is encrypted for "+recipient) {
			t.Fatalf("error %v", err)
		}
	})

	t.Run("a commit cannot forge the mark", func(t *testing.T) {
		forged := strings.Replace(plainSecret, "  name: db\n", "  name: db\n  annotations:\n    "+DecryptedFromAnnotation+": secret.yaml\n", 1)
		_, err := Options{Decrypter: d}.Render(commitTree(t, map[string]string{"secret.yaml": forged}, nil), ".")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "which knit sets on objects it decrypted") {
			t.Fatalf("error %v", err)
		}
	})

	t.Run("plain directory", func(t *testing.T) {
		objs, err := Options{Decrypter: d}.Render(commitTree(t, map[string]string{"s.yaml": encrypted("s.yaml", plainSecret)}, nil), ".")
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) != 1 || objs[0].GetAnnotations()[DecryptedFromAnnotation] != "s.yaml" {
			t.Fatalf("objects %v", toYAML(t, objs))
		}
	})
}
