package configuration

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/configuration/resources"
	"github.com/knitops/knit/controllers/owned"
)

// Reconcile makes sure the Revision for the current generation exists,
// then derives latestCreated, latestReady and Ready from the Revisions.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cfg := &servingv1.Configuration{}
	if err := r.client.Get(ctx, req.NamespacedName, cfg); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cfg.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	before := cfg.Status.DeepCopy()
	cfg.Status.InitializeConditions()

	latest, err := r.reconcileRevision(ctx, cfg)
	var taken *nameTakenError
	if err != nil {
		reason, message, ok := owned.Failure(err)
		switch {
		case errors.As(err, &taken):
			cfg.Status.MarkRevisionNameTaken(taken.Error())
		case ok:
			// The API server refuses the Revision: say so at this
			// generation, so the Service shows why instead of waiting.
			cfg.Status.MarkRevisionCreationFailed(reason, message)
		default:
			return ctrl.Result{}, err
		}
	} else {
		revs := &servingv1.RevisionList{}
		if err := r.client.List(ctx, revs, client.InNamespace(cfg.Namespace), client.MatchingLabels{servingv1.ConfigurationLabelKey: cfg.Name}); err != nil {
			return ctrl.Result{}, fmt.Errorf("list Revisions of %s: %w", req.NamespacedName, err)
		}
		markStatus(cfg, latest, revs.Items)
	}
	cfg.Status.ObservedGeneration = cfg.Generation
	if !equality.Semantic.DeepEqual(before, &cfg.Status) {
		if err := r.client.Status().Update(ctx, cfg); err != nil {
			return ctrl.Result{}, fmt.Errorf("update status of Configuration %s: %w", req.NamespacedName, err)
		}
	}
	if taken != nil {
		return ctrl.Result{}, nil // waits for a new template name
	}
	return ctrl.Result{}, err // a refused Revision is tried again
}

// nameTakenError: the template names a Revision that belongs elsewhere or
// was stamped from a different template.
type nameTakenError struct{ name, why string }

func (e *nameTakenError) Error() string {
	return fmt.Sprintf("revision %q %s; give spec.template.metadata.name a new value", e.name, e.why)
}

func (r *Reconciler) reconcileRevision(ctx context.Context, cfg *servingv1.Configuration) (*servingv1.Revision, error) {
	want := resources.MakeRevision(cfg)
	have := &servingv1.Revision{}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(want), have)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.client.Create(ctx, want); err != nil {
			return nil, &owned.WriteError{Verb: "create", Kind: "Revision", Name: want.Name, Err: err}
		}
		return want, nil
	case err != nil:
		return nil, fmt.Errorf("get Revision %s: %w", want.Name, err)
	case !metav1.IsControlledBy(have, cfg):
		return nil, &nameTakenError{name: have.Name, why: "already exists and belongs to another owner"}
	case !equality.Semantic.DeepEqual(have.Spec, want.Spec):
		if cfg.Spec.Template.Name == "" {
			return nil, &nameTakenError{name: have.Name, why: "was stamped from a different template"}
		}
		return nil, &nameTakenError{name: have.Name, why: "exists with a different spec; revisions are immutable"}
	}
	return have, nil
}

// markStatus sets latestCreated to the Revision the template resolves to,
// which is an older one again when the template names it, and moves
// latestReady as latestReady decides; Ready follows the latest created.
func markStatus(cfg *servingv1.Configuration, latest *servingv1.Revision, revs []servingv1.Revision) {
	cfg.Status.LatestCreatedRevisionName = latest.Name
	if name := latestReady(cfg, latest, revs); name != "" {
		cfg.Status.LatestReadyRevisionName = name
	}
	ready := latest.Status.GetCondition(duckv1.ConditionReady)
	switch {
	case isReady(latest):
		cfg.Status.MarkLatestCreatedReady()
	case ready.IsFalse():
		cfg.Status.MarkLatestCreatedFailed(latest.Name, ready.Message)
	default:
		cfg.Status.MarkLatestCreatedDeploying(latest.Name)
	}
}

// latestReady is the Revision latestReadyRevisionName moves to, "" to
// leave it where it is: the first ready candidate in serving order. As in
// Knative, naming an older Revision again in the template is a rollback,
// and the Route, which follows latestReady, serves it again once it is
// ready; until then the newest ready candidate keeps the traffic.
func latestReady(cfg *servingv1.Configuration, latest *servingv1.Revision, revs []servingv1.Revision) string {
	cands := candidates(cfg, latest, revs)
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].before(cands[j], cfg.Spec.Template.Name) })
	for _, c := range cands {
		if isReady(c.rev) {
			return c.rev.Name
		}
	}
	return ""
}

// candidate is a Revision latestReady may choose, with its configuration
// generation.
type candidate struct {
	rev *servingv1.Revision
	gen int64
}

// before is serving order: the Revision the template names first,
// whatever its generation, since naming it is how a user asks for it
// back; then the newest generation; equal generations by the greater
// name, so the choice never depends on list order.
func (c candidate) before(o candidate, named string) bool {
	if (c.rev.Name == named) != (o.rev.Name == named) {
		return c.rev.Name == named
	}
	if c.gen != o.gen {
		return c.gen > o.gen
	}
	return c.rev.Name > o.rev.Name
}

// candidates are the Revisions between the current latest ready one's
// generation and the Configuration's, plus the one the template names.
// The lower bound keeps latestReady from sliding back on its own: when
// the latest fails, or the latest ready one stops being ready, the
// traffic stays rather than falling to an older Revision nobody asked
// for; only naming one goes below it. After a rollback the bound is the
// rolled-back-to generation, so while a later unnamed generation deploys,
// the newest ready Revision above that bound serves. With no latest ready
// Revision to measure from (none yet, or it is gone), every Revision is
// one.
// Unlabelled and deleting Revisions are never candidates.
func candidates(cfg *servingv1.Configuration, latest *servingv1.Revision, revs []servingv1.Revision) []candidate {
	all := withLatest(latest, revs)
	floor, bounded := lowestGeneration(cfg, all)
	var cands []candidate
	for _, rev := range all {
		gen, err := configGeneration(rev)
		if err != nil || rev.DeletionTimestamp != nil {
			continue
		}
		named := cfg.Spec.Template.Name != "" && rev.Name == cfg.Spec.Template.Name
		if named || !bounded || (gen >= floor && gen <= cfg.Generation) {
			cands = append(cands, candidate{rev: rev, gen: gen})
		}
	}
	return cands
}

// lowestGeneration is the current latest ready Revision's generation, the
// lower bound for candidates; bounded is false when there is no such
// Revision, or it is being deleted, as it will not serve again. One
// without a generation label bounds at the Configuration's generation.
func lowestGeneration(cfg *servingv1.Configuration, all []*servingv1.Revision) (floor int64, bounded bool) {
	name := cfg.Status.LatestReadyRevisionName
	if name == "" {
		return 0, false
	}
	for _, rev := range all {
		if rev.Name != name || rev.DeletionTimestamp != nil {
			continue
		}
		if gen, err := configGeneration(rev); err == nil {
			return gen, true
		}
		return cfg.Generation, true
	}
	return 0, false
}

// withLatest is revs with latest in place of its listed copy, or added:
// latest is what Reconcile just read or created, and the list, served
// from the cache, can lag behind it.
func withLatest(latest *servingv1.Revision, revs []servingv1.Revision) []*servingv1.Revision {
	all := []*servingv1.Revision{latest}
	for i := range revs {
		if revs[i].Name != latest.Name {
			all = append(all, &revs[i])
		}
	}
	return all
}

// isReady: Ready is True and the Revision's controller has observed its
// current generation; a True left from an older generation says nothing.
func isReady(rev *servingv1.Revision) bool {
	return rev.Status.ObservedGeneration == rev.Generation && rev.Status.IsReady()
}

// configGeneration is the Configuration generation that stamped rev.
func configGeneration(rev *servingv1.Revision) (int64, error) {
	gen, err := strconv.ParseInt(rev.Labels[servingv1.ConfigurationGenerationLabelKey], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("revision %s: label %s: %w", rev.Name, servingv1.ConfigurationGenerationLabelKey, err)
	}
	return gen, nil
}
