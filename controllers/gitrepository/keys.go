package gitrepository

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// keySecrets are the Secrets of keys a repository's spec.decryption and
// spec.verify name, read once per reconcile: their versions go into the
// apply key (a Secret created or corrected after a commit was refused
// applies that commit again), their keys to the pass.
type keySecrets struct {
	decryption, verification keySecret
}

// keySecret is one of them: the Secret, or why it cannot be used (an
// error wrapping errDecryption or errVerification, reported on the
// commit). Both are nil when the spec does not ask for it.
type keySecret struct {
	secret *corev1.Secret
	err    error
}

// source names the Secret as errors do.
func (k keySecret) source() string {
	return fmt.Sprintf("Secret %s/%s", k.secret.Namespace, k.secret.Name)
}

// readKeySecrets reads them, uncached as credentials are: Secrets are not
// worth a cluster-wide watch. Only an error worth a retry is returned.
func (r *Reconciler) readKeySecrets(ctx context.Context, repo *knitv1alpha1.GitRepository) (keySecrets, error) {
	var k keySecrets
	var err error
	if d := repo.Spec.Decryption; d != nil {
		if d.Provider != knitv1alpha1.DecryptionProviderSOPS {
			k.decryption.err = fmt.Errorf("%w: spec.decryption.provider %q: knit decrypts sops only", errDecryption, d.Provider)
		} else if k.decryption, err = r.keySecret(ctx, repo, d.SecretRef.Name, "spec.decryption.secretRef", errDecryption); err != nil {
			return k, err
		}
	}
	if v := repo.Spec.Verify; v != nil {
		if k.verification, err = r.keySecret(ctx, repo, v.SecretRef.Name, "spec.verify.secretRef", errVerification); err != nil {
			return k, err
		}
	}
	return k, nil
}

// keySecret reads the Secret named in a GitRepository's field. A missing
// one is the user's to create (unusable wraps why).
func (r *Reconciler) keySecret(ctx context.Context, repo *knitv1alpha1.GitRepository, name, field string, unusable error) (keySecret, error) {
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: repo.Namespace, Name: name}
	if err := r.reader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return keySecret{err: fmt.Errorf("%w: %s: Secret %s not found", unusable, field, key)}, nil
		}
		return keySecret{}, fmt.Errorf("%s: Secret %s: %w", field, key, err)
	}
	return keySecret{secret: secret}, nil
}

// write adds what the apply key needs of them.
func (k keySecrets) write(w io.Writer) {
	for _, s := range []struct {
		what string
		keySecret
	}{{"decryption", k.decryption}, {"verification", k.verification}} {
		switch {
		case s.err != nil:
			fmt.Fprintf(w, "%s unusable\n", s.what)
		case s.secret != nil:
			fmt.Fprintf(w, "%s %s %s\n", s.what, s.secret.UID, s.secret.ResourceVersion)
		}
	}
}
