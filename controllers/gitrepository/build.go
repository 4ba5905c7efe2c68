package gitrepository

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/build"
	"github.com/knitops/knit/gitsync/plan"
)

// errBuilding marks a branch whose ko:// images are still building: it
// keeps what it serves and is applied once the builds are done (the build
// Job finishing wakes the repository).
var errBuilding = errors.New("building")

// buildImages replaces the ko:// images of objs by the images built from
// commit on the cluster, starting the builds that are not known yet. It
// returns errBuilding while any runs and build.ErrFailed, with the
// compiler's lines, when one failed. Without a builder (knit dev builds
// on the machine) it changes nothing. A ko:// image whose path is not
// plainly a package fails the commit before anything is built.
func (p *pass) buildImages(ctx context.Context, c plan.Commit, commit *object.Commit, objs []*unstructured.Unstructured) error {
	if err := checkSourceImages(objs); err != nil {
		return err
	}
	if p.r.builder == nil {
		return nil
	}
	built := map[string]string{}
	var running, failed []string
	for _, o := range objs {
		for _, image := range build.SourceImages(o) {
			if _, ok := built[image]; ok {
				continue
			}
			st, err := p.resolveImage(ctx, c, commit, image)
			if err != nil {
				return err
			}
			switch st.Phase {
			case knitv1alpha1.BuildSucceeded:
				built[image] = st.Image
			case knitv1alpha1.BuildFailed:
				failed = append(failed, fmt.Sprintf("%s: %s", image, st.Message))
			default:
				built[image] = ""
				running = append(running, fmt.Sprintf("%s (kubectl logs -n %s job/%s)", image, p.r.builder.Namespace(), strings.TrimPrefix(st.Job, p.r.builder.Namespace()+"/")))
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%w: %s", build.ErrFailed, strings.Join(failed, "; "))
	}
	if len(running) > 0 {
		return fmt.Errorf("%w %s", errBuilding, strings.Join(running, ", "))
	}
	for _, o := range objs {
		build.Rewrite(o, built)
	}
	return nil
}

// checkSourceImages refuses the commit when one of its ko:// images is
// not plainly a package (build.CheckImage): its path would reach go build
// as an argument. It wraps build.ErrFailed, so the commit is rejected
// with a condition and what was deployed keeps serving.
func checkSourceImages(objs []*unstructured.Unstructured) error {
	var bad []string
	for _, o := range objs {
		for _, image := range build.SourceImages(o) {
			if err := build.CheckImage(image); err != nil {
				bad = append(bad, fmt.Sprintf("%s %s: %v", o.GetKind(), o.GetName(), err))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", build.ErrFailed, strings.Join(bad, "; "))
	}
	return nil
}

// buildRevision is buildImages for a pull request's preview Revision.
func (p *pass) buildRevision(ctx context.Context, c plan.Commit, commit *object.Commit, rev *servingv1.Revision) error {
	if p.r.builder == nil {
		return nil
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rev)
	if err != nil {
		return fmt.Errorf("preview Revision %s: %w", rev.Name, err)
	}
	obj := &unstructured.Unstructured{Object: u}
	if err := p.buildImages(ctx, c, commit, []*unstructured.Unstructured{obj}); err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, rev)
}

// resolveImage asks the builder for one image of commit and records the
// answer in status.builds, with an Event when the build starts or ends.
func (p *pass) resolveImage(ctx context.Context, c plan.Commit, commit *object.Commit, image string) (knitv1alpha1.BuildStatus, error) {
	credentials := ""
	if p.repo.Spec.SecretRef != nil {
		credentials = p.repo.Spec.SecretRef.Name
	}
	req := build.Request{
		Namespace: p.repo.Namespace, Repository: p.repo.Name, URL: p.repo.Spec.URL,
		Commit: c.SHA, Tree: commit.TreeHash.String(), Image: image,
	}
	before := buildPhase(p.repo.Status.Builds, p.r.builder.Key(req))
	st, err := p.r.builder.Resolve(ctx, p.repo.Status.Builds, req, credentials)
	if err != nil {
		return st, fmt.Errorf("build %s of %s@%.7s: %w", image, c.Branch, c.SHA, err)
	}
	p.repo.Status.Builds = build.Record(p.repo.Status.Builds, st)
	if st.Phase != before {
		p.r.buildEvent(p.repo, st)
	}
	return st, nil
}

func buildPhase(builds []knitv1alpha1.BuildStatus, key string) knitv1alpha1.BuildPhase {
	for _, b := range builds {
		if b.Key == key {
			return b.Phase
		}
	}
	return ""
}

// buildEvent tells `kubectl describe gitrepository` that a build started
// or ended.
func (r *Reconciler) buildEvent(repo *knitv1alpha1.GitRepository, st knitv1alpha1.BuildStatus) {
	if r.events == nil {
		return
	}
	switch st.Phase {
	case knitv1alpha1.BuildRunning:
		r.events.Eventf(repo, nil, corev1.EventTypeNormal, "BuildStarted", "Build",
			"Building %s of %.7s: kubectl logs -n %s job/%s", st.Source, st.Commit, r.builder.Namespace(), strings.TrimPrefix(st.Job, r.builder.Namespace()+"/"))
	case knitv1alpha1.BuildSucceeded:
		r.events.Eventf(repo, nil, corev1.EventTypeNormal, "BuildSucceeded", "Build", "Built %s of %.7s as %s (%s)", st.Source, st.Commit, st.Image, st.Durations)
	case knitv1alpha1.BuildFailed:
		r.events.Eventf(repo, nil, corev1.EventTypeWarning, "BuildFailed", "Build", "Build of %s at %.7s failed: %s", st.Source, st.Commit, st.Message)
	}
}
