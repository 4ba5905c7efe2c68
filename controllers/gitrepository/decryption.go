package gitrepository

import (
	"context"
	"errors"
	"fmt"

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
// apply key holds its resourceVersion: keySecrets).
var errDecryption = errors.New("decryption keys unusable")

// decrypter is what renders of this pass decrypt with, parsed once per
// pass; nil when the repository has no spec.decryption.
func (p *pass) decrypter() (render.Decrypter, error) {
	k := p.keys.decryption
	if p.decrypt != nil || k.secret == nil && k.err == nil {
		return p.decrypt, nil
	}
	if k.err != nil {
		return nil, k.err
	}
	d, err := decryption.FromSecret(k.source(), k.secret.Data)
	if err != nil {
		return nil, fmt.Errorf("%w: spec.decryption.secretRef: %w", errDecryption, err)
	}
	p.decrypt = d
	return d, nil
}

// renderCommit renders a commit of the repository, decrypting its SOPS
// files in memory with the repository's identities.
func (p *pass) renderCommit(ctx context.Context, commit *object.Commit) ([]*unstructured.Unstructured, error) {
	d, err := p.decrypter()
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
