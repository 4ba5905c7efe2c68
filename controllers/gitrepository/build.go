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
	"github.com/knitops/knit/gitsync/build/dockerfile"
	"github.com/knitops/knit/gitsync/plan"
)

// errBuilding marks a branch whose source images are still building: it
// keeps what it serves and is applied once the builds are done (the build
// finishing wakes the repository).
var errBuilding = errors.New("building")

// ImageBuilder builds the source images a commit names (ko://,
// dockerfile://) from exactly that commit: the cluster's build Jobs
// (package build), knit dev's BuildKit. It wakes the repository when a
// build ends, through a watch or the Triggers channel.
type ImageBuilder interface {
	// Builds reports whether this builder builds image.
	Builds(image string) bool
	// Key is the build key of r: equal keys build equal images.
	Key(r build.Request) string
	// Resolve returns where the build of r stands, starting it when
	// nothing is known of its key; builds is the repository's
	// status.builds and credentials its credentials Secret ("" for none).
	Resolve(ctx context.Context, builds []knitv1alpha1.BuildStatus, r build.Request, credentials string) (knitv1alpha1.BuildStatus, error)
	// Logs says where a user reads the build's output.
	Logs(st knitv1alpha1.BuildStatus) string
}

// builderFor is the builder of image, nil when none builds it.
func (r *Reconciler) builderFor(image string) ImageBuilder {
	for _, b := range r.builders {
		if b.Builds(image) {
			return b
		}
	}
	return nil
}

// buildImages replaces the source images of objs by the images built from
// commit, starting the builds that are not known yet. It returns
// errBuilding while any runs and build.ErrFailed, with the build's last
// lines, when one failed. A ko:// image no builder takes stays as it is,
// for a runtime that builds it itself (knit dev); a dockerfile:// image
// no builder takes fails the commit. A source image whose path or
// settings knit refuses fails the commit before anything is built.
func (p *pass) buildImages(ctx context.Context, c plan.Commit, commit *object.Commit, objs []*unstructured.Unstructured) error {
	if err := checkSourceImages(objs); err != nil {
		return err
	}
	built := map[string]string{}
	var running, failed []string
	for _, o := range objs {
		for _, image := range build.SourceImages(o) {
			if _, ok := built[image]; ok {
				continue
			}
			b := p.r.builderFor(image)
			switch {
			case b == nil && dockerfile.IsRef(image):
				failed = append(failed, fmt.Sprintf("%s: this installation builds no dockerfile:// images", image))
				continue
			case b == nil:
				continue
			}
			st, err := p.resolveImage(ctx, b, c, commit, image)
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
				running = append(running, fmt.Sprintf("%s (%s)", image, b.Logs(st)))
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

// checkSourceImages refuses the commit when one of its source images is
// one knit would not build (build.CheckSource): its path would reach a
// build as an argument or a local source. It wraps build.ErrFailed, so
// the commit is rejected with a condition and what was deployed keeps
// serving.
func checkSourceImages(objs []*unstructured.Unstructured) error {
	var bad []string
	for _, o := range objs {
		for _, image := range build.SourceImages(o) {
			if err := build.CheckSource(image); err != nil {
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

// resolveImage asks b for one image of commit and records the answer in
// status.builds, with an Event when the build starts or ends.
func (p *pass) resolveImage(ctx context.Context, b ImageBuilder, c plan.Commit, commit *object.Commit, image string) (knitv1alpha1.BuildStatus, error) {
	credentials := ""
	if p.repo.Spec.SecretRef != nil {
		credentials = p.repo.Spec.SecretRef.Name
	}
	tree, err := sourceTree(commit, image)
	if err != nil {
		return knitv1alpha1.BuildStatus{}, err
	}
	req := build.Request{
		Namespace: p.repo.Namespace, Repository: p.repo.Name, URL: p.repo.Spec.URL,
		Commit: c.SHA, Tree: tree, Image: image,
	}
	before := buildPhase(p.repo.Status.Builds, b.Key(req))
	st, err := b.Resolve(ctx, p.repo.Status.Builds, req, credentials)
	if err != nil {
		return st, fmt.Errorf("build %s of %s@%.7s: %w", image, c.Branch, c.SHA, err)
	}
	p.repo.Status.Builds = build.Record(p.repo.Status.Builds, st)
	if st.Phase != before {
		p.r.buildEvent(p.repo, b, st)
	}
	return st, nil
}

// sourceTree is the tree a build of image reads, for its key: the
// commit's root tree for a ko:// image (a Go package may import any
// package of its module), the context directory's own tree for a
// dockerfile:// image (nothing outside it reaches the build), so a change
// elsewhere in the repository leaves its key, and its image, as they were.
// A context directory the commit lacks fails the commit.
func sourceTree(commit *object.Commit, image string) (string, error) {
	if !dockerfile.IsRef(image) {
		return commit.TreeHash.String(), nil
	}
	ref, err := dockerfile.Parse(image)
	if err != nil {
		return "", fmt.Errorf("%w: %w", build.ErrFailed, err)
	}
	if ref.Dir == "." {
		return commit.TreeHash.String(), nil
	}
	root, err := commit.Tree()
	if err != nil {
		return "", fmt.Errorf("tree of %.7s: %w", commit.Hash, err)
	}
	sub, err := root.Tree(ref.Dir)
	if err != nil {
		return "", fmt.Errorf("%w: %s: the directory %s is not in commit %.7s", build.ErrFailed, image, ref.Dir, commit.Hash)
	}
	return sub.Hash.String(), nil
}

func buildPhase(builds []knitv1alpha1.BuildStatus, key string) knitv1alpha1.BuildPhase {
	if b := build.Find(builds, key); b != nil {
		return b.Phase
	}
	return ""
}

// buildEvent tells `kubectl describe gitrepository` that a build started
// or ended.
func (r *Reconciler) buildEvent(repo *knitv1alpha1.GitRepository, b ImageBuilder, st knitv1alpha1.BuildStatus) {
	if r.events == nil {
		return
	}
	// Events alike but for their note fold into one series that keeps
	// the first note: each build names its own action, so a second
	// build's Events are not read as the first's.
	action := "Build/" + truncateKey(st.Key)
	switch st.Phase {
	case knitv1alpha1.BuildRunning:
		r.events.Eventf(repo, nil, corev1.EventTypeNormal, "BuildStarted", action,
			"Building %s of %.7s: %s", st.Source, st.Commit, b.Logs(st))
	case knitv1alpha1.BuildSucceeded:
		r.events.Eventf(repo, nil, corev1.EventTypeNormal, "BuildSucceeded", action, "Built %s of %.7s as %s (%s)", st.Source, st.Commit, st.Image, st.Durations)
	case knitv1alpha1.BuildFailed:
		r.events.Eventf(repo, nil, corev1.EventTypeWarning, "BuildFailed", action, "Build of %s at %.7s failed: %s", st.Source, st.Commit, st.Message)
	}
}

// truncateKey is the first 16 characters of a build key, as build Jobs
// are named.
func truncateKey(key string) string {
	if len(key) > 16 {
		return key[:16]
	}
	return key
}
