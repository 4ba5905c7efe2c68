package plan

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/knitops/knit/gitsync/render"
)

// isSecret reports whether gk is the core Secret kind.
func isSecret(gk schema.GroupKind) bool { return gk.Group == "" && gk.Kind == "Secret" }

// checkSecret says why a Secret of a commit may not be deployed, nil when
// it may: it was SOPS-encrypted in Git (render marks what it decrypted)
// and is not of a type the API server turns into a credential of its
// own. That an applied Secret never takes over one the repository did not
// deploy is the apply's check, which reads the live object.
func checkSecret(obj *unstructured.Unstructured) error {
	if _, ok := obj.GetAnnotations()[render.DecryptedFromAnnotation]; !ok {
		return errors.New("a Secret in Git must be SOPS-encrypted (sops --encrypt --age <recipient>) and the GitRepository's spec.decryption must name the Secret with its identity; " +
			"plain-text Secrets are never deployed")
	}
	t, _, _ := unstructured.NestedString(obj.Object, "type")
	if corev1.SecretType(t) == corev1.SecretTypeServiceAccountToken {
		// The token controller would fill it with a token of any
		// ServiceAccount the Secret names.
		return fmt.Errorf("type %s is never deployed from Git: it would mint a token for the ServiceAccount it names", t)
	}
	return nil
}
