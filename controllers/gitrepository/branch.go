package gitrepository

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/build"
	"github.com/knitops/knit/gitsync/plan"
	"github.com/knitops/knit/gitsync/render"
	"github.com/knitops/knit/gitsync/signatures"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// errPreviewFailed marks a preview Revision that failed: the pull
// request's problem, not one to retry.
var errPreviewFailed = errors.New("preview failed")

// pass is one sync of one repository: what it learnt along the way.
type pass struct {
	r       *Reconciler
	repo    *knitv1alpha1.GitRepository
	fetched gitsource.Fetched
	prs     []knitv1alpha1.PullRequest

	inventory []knitv1alpha1.ObjectReference
	failures  []string // "branch@sha7: error", for the Synced condition
	building  []string // "branch@sha7: building …", for the Synced condition
	failed    map[string]bool
	previews  map[string]bool           // preview Revisions this pass wants kept
	outcomes  map[int64]*previewOutcome // by pull request number
	// previewsBuilding: a pull request's head is still building, so the
	// pass must not count as applied.
	previewsBuilding bool
	// keys are the Secrets spec.decryption and spec.verify name.
	keys keySecrets
	// decrypt decrypts the commits' SOPS files (spec.decryption), parsed
	// once per pass by decrypter.
	decrypt render.Decrypter
	// trusted are the signers spec.verify trusts, parsed once per pass
	// by verifyCommit.
	trusted *signatures.Keys
	// rollouts are the rollouts the branches' commits hold, by branch
	// (rolloutTraffic), written to the status by keepRollouts.
	rollouts map[string][]knitv1alpha1.RolloutStatus
	// lacksRights: the repository's ServiceAccount may not write what a
	// branch holds; the pass does not count as applied, so the next poll
	// tries again (identityError).
	lacksRights bool
	// previewRefs are the preview Services and copies of the open pull
	// requests, which join the inventory (previewobjects.go).
	previewRefs []knitv1alpha1.ObjectReference
}

// previewOutcome is what a pass did for one open pull request; the
// repository's status.previews records it (outcomes.go).
type previewOutcome struct {
	commit    string   // the head commit previewed, "" when it could not be read
	revisions []string // preview Revisions, one per Service the head changes
	ready     bool     // all of them ready, so their tags carry traffic
	err       string   // why the head could not be previewed
	// baseService and canaryAnnotation are the first previewed Service's
	// name on the base branch and its knit.dev/canary annotation.
	baseService, canaryAnnotation string
	// services are the preview Services of the Services the head adds;
	// the first one's URL is the pull request's when no base Service
	// carries its tag.
	services []string
}

// branch syncs one tracked branch's head. A bad commit is recorded and
// announced, and its branch keeps what it had; only errors worth a retry
// are returned.
func (p *pass) branch(ctx context.Context, branch string, main bool) error {
	sha, ok := p.fetched.Heads[branch]
	if !ok {
		p.keepInventory(branch) // nothing pushed yet, or the branch was deleted: keep serving
		return nil
	}
	c, commit, err := p.commit(branch, main, sha)
	if err != nil {
		return err
	}
	status := p.branchStatus(branch)
	status.Commit = sha
	signer, err := p.verifyCommit(commit)
	var objs []*unstructured.Unstructured
	if err == nil {
		objs, err = p.render(ctx, c, commit, branch, main)
	}
	if err == nil {
		err = p.buildImages(ctx, c, commit, objs)
	}
	if err == nil {
		err = p.r.apply(ctx, p.repo, objs)
	}
	if errors.Is(err, errBuilding) {
		p.building = append(p.building, fmt.Sprintf("%s@%s: %v", branch, sha[:7], err))
		status.Error = "" // an earlier commit's: this one has not failed
		p.keepInventory(branch)
		return nil
	}
	if err != nil {
		if !invalid(err) {
			return err
		}
		p.fail(ctx, c, err)
		status.Error = err.Error()
		return nil
	}
	now := metav1.Now()
	status.AppliedCommit, status.Error, status.LastSyncTime, status.Signer = sha, "", &now, signer
	for _, o := range objs {
		p.inventory = append(p.inventory, knitv1alpha1.ObjectReference{
			APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName(), Branch: branch,
		})
	}
	return nil
}

// render renders a branch head and plans its objects, previews of open
// pull requests into the branch included.
func (p *pass) render(ctx context.Context, c plan.Commit, commit *object.Commit, branch string, main bool) ([]*unstructured.Unstructured, error) {
	rendered, err := p.renderCommit(ctx, commit)
	if err != nil {
		return nil, err
	}
	source, err := sourceFingerprint(commit)
	if err != nil {
		return nil, err
	}
	canaries, err := p.previewsInto(ctx, branch, main, rendered, source)
	if err != nil {
		return nil, err
	}
	return plan.Objects(plan.Input{
		Commit: c, Rendered: rendered, Canaries: canaries, Source: source,
		Live:       func(name string) *servingv1.Service { return p.r.liveService(ctx, p.repo.Namespace, name) },
		Namespaced: p.r.namespaced, Kinds: p.r.kinds(p.repo), Rollout: p.rolloutTraffic(ctx, c),
	})
}

// sourceFingerprint fingerprints the commit's app sources from its tree,
// without reading a blob.
func sourceFingerprint(commit *object.Commit) (string, error) {
	tree, err := commit.Tree()
	if err != nil {
		return "", fmt.Errorf("tree of %s: %w", commit.Hash, err)
	}
	var walkErr error
	fp := plan.SourceFingerprint(func(yield func(name, blob string) bool) {
		walker := object.NewTreeWalker(tree, true, nil)
		defer walker.Close()
		for {
			name, entry, err := walker.Next()
			if err != nil {
				if err != io.EOF {
					walkErr = err
				}
				return
			}
			if entry.Mode.IsFile() && !yield(name, entry.Hash.String()) {
				return
			}
		}
	})
	if walkErr != nil {
		return "", fmt.Errorf("walk %s: %w", commit.Hash, walkErr)
	}
	return fp, nil
}

// commit reads a fetched commit and describes it for plan and events.
func (p *pass) commit(branch string, main bool, sha string) (plan.Commit, *object.Commit, error) {
	commit, err := p.r.cache.Commit(cacheKey(client.ObjectKeyFromObject(p.repo)), sha)
	if err != nil {
		return plan.Commit{}, nil, err
	}
	return plan.Commit{
		Repository: p.repo.Name, Namespace: p.repo.Namespace, Branch: branch, Main: main, SHA: sha,
		Author:  fmt.Sprintf("%s <%s>", commit.Author.Name, commit.Author.Email),
		Message: commit.Message,
	}, commit, nil
}

// fail records a bad commit: condition, branch status, event, and the
// branch keeps its objects.
func (p *pass) fail(ctx context.Context, c plan.Commit, err error) {
	log.FromContext(ctx).Info("Commit not applied", "branch", c.Branch, "commit", c.SHA, "err", err.Error())
	p.failures = append(p.failures, fmt.Sprintf("%s@%s (%s): %v", c.Branch, c.SHA[:7], firstLine(c.Message), err))
	p.lacksRights = p.lacksRights || lacksRights(err)
	p.keepInventory(c.Branch)
	if p.r.announcer != nil {
		p.r.announcer.SyncFailed(ctx, p.repo, c, err)
	}
}

func (p *pass) keepInventory(branch string) {
	if p.failed == nil {
		p.failed = map[string]bool{}
	}
	p.failed[branch] = true
	for _, ref := range p.repo.Status.Inventory {
		if ref.Branch == branch {
			p.inventory = append(p.inventory, ref)
		}
	}
}

func (p *pass) branchStatus(branch string) *knitv1alpha1.BranchStatus {
	if b := p.repo.Status.Branch(branch); b != nil {
		return b
	}
	p.repo.Status.Branches = append(p.repo.Status.Branches, knitv1alpha1.BranchStatus{Name: branch})
	return &p.repo.Status.Branches[len(p.repo.Status.Branches)-1]
}

func (p *pass) markSynced() {
	if len(p.failures) == 0 && len(p.building) > 0 {
		p.repo.Status.MarkBuilding(strings.Join(p.building, "; ") + "; what was deployed before keeps serving until the builds are done")
		return
	}
	if len(p.failures) == 0 {
		p.repo.Status.MarkSynced()
		return
	}
	reason := knitv1alpha1.ReasonCommitRejected
	if p.lacksRights {
		reason = ReasonForbidden
	}
	p.repo.Status.MarkSyncFailed(reason,
		strings.Join(p.failures, "; ")+"; what was deployed before keeps serving")
}

// invalid tells a bad commit (user error: fix and push) from a failure
// worth retrying.
func invalid(err error) bool {
	if errors.Is(err, render.ErrInvalid) || errors.Is(err, errDecryption) || errors.Is(err, errVerification) || errors.Is(err, signatures.ErrNotTrusted) || errors.Is(err, plan.ErrInvalid) || errors.Is(err, errPreviewFailed) || errors.Is(err, build.ErrFailed) {
		return true
	}
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err) ||
		meta.IsNoMatchError(err) || apierrors.IsNotFound(err) && strings.Contains(err.Error(), "the server could not find the requested resource")
}

func (r *Reconciler) liveService(ctx context.Context, namespace, name string) *servingv1.Service {
	svc := &servingv1.Service{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, svc); err != nil {
		return nil
	}
	return svc
}

func (r *Reconciler) namespaced(gvk schema.GroupVersionKind) (bool, error) {
	m, err := r.client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return false, fmt.Errorf("unknown kind: %w", err)
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
