package gitrepository

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing/object"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/plan"
)

// The preview objects of a pull request besides its preview Revisions:
// the preview Services of the Services its head adds, and the copies of
// the ConfigMaps and EventSinks its head adds or changes (plan.Preview).
// They join the repository's inventory under their base branch, marked
// with their pull request's number: the prune that removes what a commit
// dropped removes what a head dropped and what a closed pull request
// left, spec.deletionPolicy deletes them with the rest, and a base branch
// whose commit failed keeps its previews as it keeps its objects. The
// inventory spares knit listing ConfigMaps, which neither its cache nor
// a GitOps identity's rights cover.

// deployPreview applies the copies and preview Services of a pull
// request into base, the Services once their source images are built,
// and says whether some are still building. A head knit refuses (a name
// production holds, a copy or a Service the API would not admit) is
// recorded in out.err and nothing of it is written: every object is
// checked, then dry-run, before any is applied.
func (p *pass) deployPreview(ctx context.Context, base string, head plan.Commit, commit *object.Commit, number int64, pv *plan.Preview, out *previewOutcome) (bool, error) {
	all := slices.Concat(pv.Copies, pv.Services)
	for _, s := range pv.Services {
		out.services = append(out.services, s.GetName())
	}
	// Only what is the pull request's may join the inventory: a prune
	// would delete it.
	if err := p.r.checkPreviewOwned(ctx, p.repo, number, all); err != nil {
		return false, p.previewFailed(err, out)
	}
	for _, o := range all {
		p.previewRefs = append(p.previewRefs, knitv1alpha1.ObjectReference{
			APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName(),
			Branch: base, PullRequest: number,
		})
	}
	objs := slices.Clone(pv.Copies)
	building := false
	switch err := p.buildImages(ctx, head, commit, pv.Services); {
	case errors.Is(err, errBuilding):
		p.previewsBuilding, building = true, true
	case err != nil:
		return false, p.previewFailed(err, out)
	default:
		objs = append(objs, pv.Services...)
	}
	if len(objs) == 0 {
		return building, nil
	}
	if err := p.r.apply(ctx, p.repo, objs); err != nil {
		return false, p.previewFailed(err, out)
	}
	return building, nil
}

// previewFailed records in out why a head's preview was not deployed, if
// the head is to blame (or the identity's rights); any other error is
// returned, to be retried.
func (p *pass) previewFailed(err error, out *previewOutcome) error {
	if !invalid(err) {
		return err
	}
	p.lacksRights = p.lacksRights || lacksRights(err)
	out.err = fmt.Sprintf("preview not deployed, production untouched: %v", err)
	return nil
}

// checkPreviewOwned refuses to write a preview object over one that is
// not pull request number's preview of repo: no preview name is kept
// from production's (plan.PreviewName), so a production object that
// happens to bear it must stay as it is.
func (r *Reconciler) checkPreviewOwned(ctx context.Context, repo *knitv1alpha1.GitRepository, number int64, objs []*unstructured.Unstructured) error {
	reader, err := r.uncachedWriter(repo)
	if err != nil {
		return err
	}
	for _, o := range objs {
		have := &metav1.PartialObjectMetadata{}
		have.SetGroupVersionKind(o.GroupVersionKind())
		err := reader.Get(ctx, client.ObjectKeyFromObject(o), have)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("get %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if !isPreviewOf(have, repo.Name, number) {
			return fmt.Errorf("%w: %s %s already exists and is not this pull request's preview: knit leaves it as it is and previews nothing of the head",
				errPreviewFailed, o.GetKind(), o.GetName())
		}
	}
	return nil
}

// uncachedWriter reads as repo's sync writes, from the API server:
// knit's own rights and cache do not reach an app namespace's
// ConfigMaps, the GitOps identity's do.
func (r *Reconciler) uncachedWriter(repo *knitv1alpha1.GitRepository) (client.Reader, error) {
	if sa, _ := r.serviceAccount(repo); sa == "" {
		return r.reader, nil
	}
	return r.writer(repo)
}

// ownsPreview reports whether ref, a preview object of the inventory,
// is still there and still its pull request's: production may have taken
// its name since, and what production holds is never pruned as a
// preview.
func (r *Reconciler) ownsPreview(ctx context.Context, repo *knitv1alpha1.GitRepository, ref knitv1alpha1.ObjectReference) (bool, error) {
	reader, err := r.uncachedWriter(repo)
	if err != nil {
		return false, err
	}
	have := &metav1.PartialObjectMetadata{}
	have.APIVersion, have.Kind = ref.APIVersion, ref.Kind
	err = reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, have)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, asIdentity(repo, fmt.Errorf("get preview %s %s: %w", ref.Kind, ref.Name, err))
	}
	return isPreviewOf(have, repo.Name, ref.PullRequest), nil
}

func isPreviewOf(o metav1.Object, repo string, number int64) bool {
	l := o.GetLabels()
	return l[plan.RepositoryLabel] == repo && l[plan.PullRequestLabel] == strconv.FormatInt(number, 10)
}
