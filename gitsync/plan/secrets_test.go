package plan

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/knitops/knit/gitsync/render"
)

func TestObjectsSecrets(t *testing.T) {
	decrypted := "  annotations: {" + render.DecryptedFromAnnotation + ": secrets/db.yaml}\n"
	for _, tc := range []struct {
		name, doc string
		refused   string
	}{
		{"decrypted", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n" + decrypted + "stringData: {password: x}\n", ""},
		{"decrypted, a registry's", "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/dockerconfigjson\nmetadata:\n  name: pull\n" + decrypted, ""},
		{"plain text", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData: {password: x}\n", "Secret db: a Secret in Git must be SOPS-encrypted"},
		{"a token", "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/service-account-token\nmetadata:\n  name: tok\n" + decrypted,
			"Secret tok: type kubernetes.io/service-account-token is never deployed from Git"},
		{"listed in allowedKinds, still plain", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n", "must be SOPS-encrypted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Objects(Input{Commit: commit(sha1), Rendered: []*unstructured.Unstructured{parse(t, tc.doc)},
				Kinds: Kinds{Repository: "default/hello", Allowed: []string{"Secret"}}, Namespaced: namespacedAll})
			if tc.refused != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("err = %v, want ErrInvalid saying %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != 1 || objs[0].GetLabels()[RepositoryLabel] != "hello" || objs[0].GetNamespace() != "default" {
				t.Fatalf("planned %v, want the Secret stamped with its repository in its namespace", objs)
			}
		})
	}
}
