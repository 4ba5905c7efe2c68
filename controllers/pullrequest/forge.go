package pullrequest

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/egress"
	"github.com/knitops/knit/gitsync/forge"
	"github.com/knitops/knit/gitsync/forgeapi"
	"github.com/knitops/knit/gitsync/githubapp"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// TokenKeys are the keys of a GitRepository's Secret knit reads a forge
// API token from, in order: a dedicated apiToken, else the bearer token or
// password it already fetches with (a Gitea or GitHub token serves both).
var TokenKeys = []string{"apiToken", "bearerToken", "password"}

// errNoToken: the repository names a forge but gives knit nothing to
// authenticate to its API with.
var errNoToken = errors.New("no API token: add apiToken (or bearerToken) to the repository's Secret for knit to report to the forge")

// ForgeFromSecret makes a repository's forge client from its provider,
// URL and Secret, read uncached through r (Secrets are not worth a
// cluster-wide watch). Repositories without a forge provider get none.
// Every call obeys policy (nil: knit's default, which refuses loopback,
// link-local and control-plane addresses).
//
// GitHub App credentials in the Secret are exchanged through apps for an
// installation token, which the API takes as it takes a personal token;
// nil apps leaves them unread.
func ForgeFromSecret(r client.Reader, policy func() *egress.Policy, apps *githubapp.Tokens) func(ctx context.Context, repo *knitv1alpha1.GitRepository) (Forge, error) {
	if policy == nil {
		policy = func() *egress.Policy { return &egress.Policy{} }
	}
	return func(ctx context.Context, repo *knitv1alpha1.GitRepository) (Forge, error) {
		switch repo.Spec.Provider {
		case knitv1alpha1.GitProviderGitHub, knitv1alpha1.GitProviderGitLab, knitv1alpha1.GitProviderGitea:
		default:
			return nil, nil
		}
		if repo.Spec.SecretRef == nil {
			return nil, errNoToken
		}
		s := &corev1.Secret{}
		if err := r.Get(ctx, types.NamespacedName{Namespace: repo.Namespace, Name: repo.Spec.SecretRef.Name}, s); err != nil {
			return nil, fmt.Errorf("Secret %s of GitRepository %s: %w", repo.Spec.SecretRef.Name, repo.Name, err)
		}
		if err := gitsource.CheckCredentialsSecret(s); err != nil {
			return nil, err // none of its keys goes to the forge
		}
		data := s.Data
		if apps != nil {
			var err error
			if data, err = apps.Resolve(ctx, s.Data); err != nil {
				return nil, err
			}
		}
		for _, k := range TokenKeys {
			if tok := data[k]; len(tok) > 0 {
				return forgeapi.New(forgeapi.Options{Provider: forge.Forge(repo.Spec.Provider), RepoURL: repo.Spec.URL, Token: string(tok), Egress: policy})
			}
		}
		return nil, errNoToken
	}
}

// report tells the forge what changed since status.reported: the two
// commit statuses, the one comment, and the merge of a promoted canary
// that asked for it. It records what was told and the ForgeReported
// condition; the error, if any, asks for a retry with backoff.
func (r *Reconciler) report(ctx context.Context, repo *knitv1alpha1.GitRepository, pr *knitv1alpha1.PullRequest, commit string) error {
	f, err := r.forges(ctx, repo)
	if err != nil {
		// Only knit's own errors here: nothing was sent yet.
		pr.Status.MarkForgeNotReported(knitv1alpha1.ReasonNoForgeClient, err.Error())
		return nil // nothing to retry until the repository or its Secret changes
	}
	if f == nil || commit == "" {
		return nil
	}
	want := desiredReport(pr, commit)
	have := knitv1alpha1.ForgeReport{}
	if pr.Status.Reported != nil && pr.Status.Reported.Commit == commit {
		have = *pr.Status.Reported
	}
	have.Commit = commit
	defer func() { pr.Status.Reported = &have }()
	err = r.tell(ctx, f, pr, want, &have)
	if err != nil {
		// The log has the forge's (bounded, sanitized) answer; the status
		// only knit's words, since whoever runs the address the URL
		// points at writes that answer.
		log.FromContext(ctx).Info("Forge not told; retrying", "pullRequest", pr.Name, "err", err.Error())
		pr.Status.MarkForgeNotReported(knitv1alpha1.ReasonForgeError, forgeapi.Summary(err))
		return err
	}
	pr.Status.MarkForgeReported()
	return nil
}

// tell makes each call whose content changed, recording it in have as it
// succeeds, so a failure halfway repeats only what is left.
func (r *Reconciler) tell(ctx context.Context, f Forge, pr *knitv1alpha1.PullRequest, want report, have *knitv1alpha1.ForgeReport) error {
	if k := want.preview.key(); k != have.Preview {
		if err := f.SetStatus(ctx, want.commit, forgeStatus(PreviewContext, want.preview)); err != nil {
			return fmt.Errorf("set %s: %w", PreviewContext, err)
		}
		have.Preview = k
	}
	if k := want.canary.key(); k != "" && k != have.Canary {
		if err := f.SetStatus(ctx, want.commit, forgeStatus(CanaryContext, want.canary)); err != nil {
			return fmt.Errorf("set %s: %w", CanaryContext, err)
		}
		have.Canary = k
	}
	if d := digest(want.comment); d != have.Comment {
		if err := f.UpsertComment(ctx, pr.Spec.Number, commentMarker, want.comment); err != nil {
			return fmt.Errorf("comment: %w", err)
		}
		have.Comment = d
	}
	if c := pr.Status.Canary; c != nil && c.Phase == knitv1alpha1.CanaryPromoted && mayMerge(pr, c.Commit) && !have.Merged {
		log.FromContext(ctx).Info("Merging the pull request: its canary passed every step", "pullRequest", pr.Name, "commit", c.Commit)
		if err := f.Merge(ctx, pr.Spec.Number, c.Commit); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		have.Merged = true
	}
	return nil
}

func forgeStatus(context string, s status) forgeapi.Status {
	return forgeapi.Status{Context: context, State: forgeapi.State(s.state), TargetURL: s.targetURL, Description: s.description}
}
