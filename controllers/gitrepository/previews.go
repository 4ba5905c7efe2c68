package gitrepository

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/plan"
	prmodel "github.com/knitops/knit/gitsync/pullrequest"
)

// previewsInto deploys the previews of the open pull requests into
// branch, whose head rendered base from sources (its SourceFingerprint),
// and returns, per Service, the canaries of those that are ready. A pull
// request whose head cannot be previewed is reported on the pull
// request; the base branch syncs regardless.
func (p *pass) previewsInto(ctx context.Context, branch string, main bool, base []*unstructured.Unstructured, sources string) (map[string][]plan.Canary, error) {
	canaries := map[string][]plan.Canary{}
	for i := range p.prs {
		pr := &p.prs[i]
		if !isOpen(pr) || pr.Spec.BaseBranch != branch {
			continue
		}
		out := p.outcome(pr.Spec.Number)
		if err := p.preview(ctx, pr, previewBase{branch, main, base, sources}, out, canaries); err != nil {
			return nil, err
		}
	}
	return canaries, nil
}

// preview handles one open pull request into branch: its head as a
// whole, the copies and preview Services first (previewobjects.go), then
// a preview Revision for each Service the base branch has, reading the
// copies.
func (p *pass) preview(ctx context.Context, pr *knitv1alpha1.PullRequest, base previewBase,
	out *previewOutcome, canaries map[string][]plan.Canary) error {
	sha := p.fetched.Heads[pr.Spec.HeadBranch]
	out.commit = sha
	if sha == "" {
		out.err = fmt.Sprintf("head branch %q is not in the repository", pr.Spec.HeadBranch)
		return nil
	}
	if msg := untrusted(p.repo, pr, sha); msg != "" {
		out.err = msg
		return nil
	}
	head, commit, err := p.commit(headName(pr), false, sha)
	if err != nil {
		return err
	}
	if _, err := p.verifyCommit(commit); err != nil {
		if !invalid(err) {
			return err
		}
		out.err = err.Error()
		return nil
	}
	rendered, err := p.renderCommit(ctx, commit)
	if err != nil {
		out.err = err.Error()
		return nil
	}
	sources, err := sourceFingerprint(commit)
	if err != nil {
		return err
	}
	pv, err := plan.PlanPreview(plan.PreviewInput{Head: head, Number: pr.Spec.Number, BaseBranch: base.branch, BaseMain: base.main,
		Base: base.rendered, Rendered: rendered, Kinds: p.r.kinds(p.repo), BaseSource: base.sources, HeadSource: sources})
	if err != nil {
		out.err = err.Error()
		return nil
	}
	building, err := p.deployPreview(ctx, base.branch, head, commit, pr.Spec.Number, pv, out)
	if err != nil || out.err != "" {
		return err // no preview Revision may read a copy that is not there
	}
	out.ready = !building
	for _, o := range pv.Existing {
		baseService := plan.ServiceName(o.GetName(), base.branch, base.main)
		rev, err := plan.PullRequestRevision(head, o, baseService, pr.Spec.Number)
		if err != nil {
			out.err = err.Error()
			out.ready = false
			continue
		}
		if err := p.buildRevision(ctx, head, commit, rev); err != nil {
			out.ready = false
			switch {
			case errors.Is(err, errBuilding):
				p.previewsBuilding = true
				continue
			case invalid(err):
				out.err = err.Error()
				continue
			}
			return err
		}
		p.previews[rev.Name] = true
		if len(out.revisions) == 0 {
			out.baseService, out.canaryAnnotation = baseService, o.GetAnnotations()[CanaryAnnotation]
		}
		out.revisions = append(out.revisions, rev.Name)
		ready, err := p.r.ensurePreview(ctx, p.repo, rev)
		if err != nil {
			if invalid(err) {
				out.err, out.ready = err.Error(), false
				continue
			}
			return err
		}
		if !ready {
			out.ready = false
			continue
		}
		canaries[o.GetName()] = append(canaries[o.GetName()], plan.Canary{
			Tag: plan.Tag(pr.Spec.Number), RevisionName: rev.Name, Percent: share(pr, sha),
		})
	}
	if out.ready && len(out.revisions) == 0 && len(out.services) == 0 {
		out.err, out.ready = "the head has no Service to preview: it neither changes one of the base branch's nor adds one", false
	}
	return nil
}

// previewBase is the base branch of the pull requests a pass previews:
// its name, whether it is the main branch, its head's objects as
// rendered and its sources' fingerprint.
type previewBase struct {
	branch   string
	main     bool
	rendered []*unstructured.Unstructured
	sources  string
}

// untrusted says why the head sha of pr must not be previewed, "" when
// it may. A fork's head is its author's code, built and run with the
// repository's identity: it is previewed only from the forge's pull ref
// (never a base branch of the same name), at the commit the forge
// reported, once a maintainer approved that commit.
func untrusted(repo *knitv1alpha1.GitRepository, pr *knitv1alpha1.PullRequest, sha string) string {
	if !prmodel.IsFork(pr) {
		return ""
	}
	switch {
	case !strings.HasPrefix(pr.Spec.HeadBranch, "refs/"):
		return fmt.Sprintf("pull request from a fork: its head %q is not the forge's pull ref; not previewed", pr.Spec.HeadBranch)
	case pr.Spec.HeadCommit != "" && pr.Spec.HeadCommit != sha:
		return fmt.Sprintf("pull request from a fork: %s is at %.12s, the forge reported %.12s; waiting for the forge", pr.Spec.HeadBranch, sha, pr.Spec.HeadCommit)
	case !prmodel.Approved(pr, sha):
		return fmt.Sprintf("pull request from a fork: waiting for a maintainer to add the %q label for commit %.12s", prmodel.ApprovalLabel(repo), sha)
	}
	return ""
}

// headName is the head's branch as the preview's labels carry it: a
// fork's pull ref (refs/pull/7/head) as pull-7-head, since a label value
// has no slashes.
func headName(pr *knitv1alpha1.PullRequest) string {
	if !strings.HasPrefix(pr.Spec.HeadBranch, "refs/") {
		return pr.Spec.HeadBranch
	}
	return fmt.Sprintf("pull-%d-head", pr.Spec.Number)
}

// ensurePreview creates a preview Revision, with repo's identity
// (writer), if it is missing and reports whether it is ready; a failed
// one is an error naming why.
func (r *Reconciler) ensurePreview(ctx context.Context, repo *knitv1alpha1.GitRepository, want *servingv1.Revision) (bool, error) {
	have := &servingv1.Revision{}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(want), have)
	if apierrors.IsNotFound(err) {
		w, err := r.writer(repo)
		if err != nil {
			return false, err
		}
		log.FromContext(ctx).Info("Creating preview Revision", "revision", want.Name, "pullRequest", want.Labels[plan.PullRequestLabel])
		if err := w.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, asIdentity(repo, fmt.Errorf("create preview Revision %s: %w", want.Name, err))
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ready := have.Status.GetCondition(duckv1.ConditionReady)
	switch {
	case ready.IsTrue():
		return true, nil
	case ready.IsFalse():
		return false, fmt.Errorf("%w: preview Revision %s failed: %s: %s", errPreviewFailed, have.Name, ready.Reason, ready.Message)
	}
	return false, nil
}

// CanaryAnnotation on a Service in the head branch asks for a stepped
// canary ("10,25,50 every 2m") when the pull request itself does not.
const CanaryAnnotation = "knit.dev/canary"

// share is the head's share of the base's traffic: the pull request's,
// except that a stepped canary of an older head commit gives the new one
// nothing until the canary restarts for it.
func share(pr *knitv1alpha1.PullRequest, head string) int64 {
	if c := pr.Status.Canary; c != nil && c.Commit != "" && c.Commit != head {
		return 0
	}
	return pr.EffectiveShare()
}

func isOpen(pr *knitv1alpha1.PullRequest) bool {
	return pr.Spec.State == knitv1alpha1.PullRequestOpen || pr.Spec.State == ""
}

func (p *pass) outcome(number int64) *previewOutcome {
	if p.outcomes == nil {
		p.outcomes = map[int64]*previewOutcome{}
	}
	if o, ok := p.outcomes[number]; ok {
		return o
	}
	o := &previewOutcome{}
	p.outcomes[number] = o
	return o
}
