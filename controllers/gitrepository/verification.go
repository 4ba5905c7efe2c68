package gitrepository

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/knitops/knit/gitsync/signatures"
)

// errVerification marks a GitRepository whose verification Secret cannot
// be used: the user's to fix, reported on the commit like a bad commit.
var errVerification = errors.New("verification keys unusable")

// verifyCommit checks a commit against spec.verify and returns who signed
// it ("" when the repository verifies nothing). The trusted keys are
// parsed once per pass.
func (p *pass) verifyCommit(commit *object.Commit) (string, error) {
	k := p.keys.verification
	if k.secret == nil && k.err == nil {
		return "", nil
	}
	if k.err != nil {
		return "", k.err
	}
	if p.trusted == nil {
		keys, err := signatures.FromSecret(k.source(), k.secret.Data)
		if err != nil {
			return "", fmt.Errorf("%w: spec.verify.secretRef: %w", errVerification, err)
		}
		p.trusted = keys
	}
	return p.trusted.Verify(commit)
}
