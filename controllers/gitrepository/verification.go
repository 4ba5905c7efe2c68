package gitrepository

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/object"
	corev1 "k8s.io/api/core/v1"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/signatures"
)

// errVerification marks a GitRepository whose verification Secret cannot
// be used: the user's to fix, reported on the commit like a bad commit.
var errVerification = errors.New("verification keys unusable")

// verificationSecret reads the Secret spec.verify names, nil when the
// repository verifies nothing.
func (r *Reconciler) verificationSecret(ctx context.Context, repo *knitv1alpha1.GitRepository) (*corev1.Secret, error) {
	v := repo.Spec.Verify
	if v == nil {
		return nil, nil
	}
	return r.keySecret(ctx, repo, v.SecretRef.Name, "spec.verify.secretRef", errVerification)
}

// verifyCommit checks a commit against spec.verify and returns who signed
// it ("" when the repository verifies nothing). The trusted keys are read
// once per pass.
func (p *pass) verifyCommit(ctx context.Context, commit *object.Commit) (string, error) {
	if p.repo.Spec.Verify == nil {
		return "", nil
	}
	if p.trusted == nil {
		s, err := p.r.verificationSecret(ctx, p.repo)
		if err != nil {
			return "", err
		}
		keys, err := signatures.FromSecret(fmt.Sprintf("Secret %s/%s", s.Namespace, s.Name), s.Data)
		if err != nil {
			return "", fmt.Errorf("%w: spec.verify.secretRef: %w", errVerification, err)
		}
		p.trusted = keys
	}
	return p.trusted.Verify(commit)
}
