package gitrepository

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing/object"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/decryption"
	"github.com/knitops/knit/gitsync/plan"
	"github.com/knitops/knit/gitsync/render"
)

// errDecryption marks a GitRepository whose decryption Secret cannot be
// used: the user's to fix (create or correct the Secret), reported on the
// commit like a bad commit, and tried again once the Secret changes (the
// apply key holds its resourceVersion).
var errDecryption = errors.New("decryption keys unusable")

// decryptionSecret reads the Secret spec.decryption names, nil when the
// repository decrypts nothing.
func (r *Reconciler) decryptionSecret(ctx context.Context, repo *knitv1alpha1.GitRepository) (*corev1.Secret, error) {
	d := repo.Spec.Decryption
	if d == nil {
		return nil, nil
	}
	if d.Provider != knitv1alpha1.DecryptionProviderSOPS {
		return nil, fmt.Errorf("%w: spec.decryption.provider %q: knit decrypts sops only", errDecryption, d.Provider)
	}
	return r.keySecret(ctx, repo, d.SecretRef.Name, "spec.decryption.secretRef", errDecryption)
}

// keySecret reads a Secret of keys a GitRepository's field names. It is
// read uncached, as credentials are: Secrets are not worth a
// cluster-wide watch. A missing Secret is the user's to create (unusable
// wraps the error).
func (r *Reconciler) keySecret(ctx context.Context, repo *knitv1alpha1.GitRepository, name, field string, unusable error) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: repo.Namespace, Name: name}
	if err := r.reader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%w: %s: Secret %s not found", unusable, field, key)
		}
		return nil, fmt.Errorf("%s: Secret %s: %w", field, key, err)
	}
	return secret, nil
}

// writeKeySecrets adds to an apply key what decryption and verification
// read: their Secrets' versions, so that a Secret created or corrected
// after a commit was refused applies that commit again.
func (r *Reconciler) writeKeySecrets(ctx context.Context, w io.Writer, repo *knitv1alpha1.GitRepository) error {
	for _, k := range []struct {
		what     string
		read     func(context.Context, *knitv1alpha1.GitRepository) (*corev1.Secret, error)
		unusable error
	}{
		{"decryption", r.decryptionSecret, errDecryption},
		{"verification", r.verificationSecret, errVerification},
	} {
		s, err := k.read(ctx, repo)
		switch {
		case errors.Is(err, k.unusable):
			fmt.Fprintf(w, "%s unusable\n", k.what)
		case err != nil:
			return err
		case s != nil:
			fmt.Fprintf(w, "%s %s %s\n", k.what, s.UID, s.ResourceVersion)
		}
	}
	return nil
}

// decrypter is what renders of this pass decrypt with, read once per
// pass; nil when the repository has no spec.decryption.
func (p *pass) decrypter(ctx context.Context) (render.Decrypter, error) {
	if p.decrypt != nil || p.repo.Spec.Decryption == nil {
		return p.decrypt, nil
	}
	s, err := p.r.decryptionSecret(ctx, p.repo)
	if err != nil {
		return nil, err
	}
	d, err := decryption.FromSecret(fmt.Sprintf("Secret %s/%s", s.Namespace, s.Name), s.Data)
	if err != nil {
		return nil, fmt.Errorf("%w: spec.decryption.secretRef: %w", errDecryption, err)
	}
	p.decrypt = d
	return d, nil
}

// renderCommit renders a commit of the repository, decrypting its SOPS
// files in memory with the repository's identities.
func (p *pass) renderCommit(ctx context.Context, commit *object.Commit) ([]*unstructured.Unstructured, error) {
	d, err := p.decrypter(ctx)
	if err != nil {
		return nil, err
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", commit.Hash, err)
	}
	objs, err := render.Options{Decrypter: d}.Render(tree, p.repo.Spec.Path)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", commit.Hash.String()[:7], err)
	}
	return objs, nil
}

// checkSecretsOwned refuses to apply a Secret over one this repository
// did not deploy: server-side apply with force would take it over, and a
// push could then replace another repository's credentials or a Secret a
// person made. It reads with the writer, so an identity that may not read
// a Secret may not overwrite it either.
func checkSecretsOwned(ctx context.Context, w client.Client, repo *knitv1alpha1.GitRepository, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if o.GetAPIVersion() != "v1" || o.GetKind() != "Secret" {
			continue
		}
		live := &corev1.Secret{}
		err := w.Get(ctx, client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetName()}, live)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return asIdentity(repo, fmt.Errorf("read Secret %s before applying it: %w", o.GetName(), err))
		}
		if live.Labels[plan.RepositoryLabel] != repo.Name {
			return fmt.Errorf("%w: Secret %s already exists and was not deployed by GitRepository %s: knit does not take over a Secret; delete it or name this one differently",
				plan.ErrInvalid, o.GetName(), repo.Name)
		}
	}
	return nil
}
