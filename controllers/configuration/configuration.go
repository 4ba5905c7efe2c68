package configuration

import (
	"context"
	"errors"
	"fmt"
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

// markStatus sets latestCreated to the current generation's Revision and
// latestReady to the newest ready one; Ready follows the latest created.
func markStatus(cfg *servingv1.Configuration, latest *servingv1.Revision, revs []servingv1.Revision) {
	cfg.Status.LatestCreatedRevisionName = latest.Name
	if name := newestReady(revs); name != "" {
		cfg.Status.LatestReadyRevisionName = name
	}
	ready := latest.Status.GetCondition(duckv1.ConditionReady)
	switch {
	case ready.IsTrue() && latest.Status.ObservedGeneration == latest.Generation:
		cfg.Status.MarkLatestCreatedReady()
	case ready.IsFalse():
		cfg.Status.MarkLatestCreatedFailed(latest.Name, ready.Message)
	default:
		cfg.Status.MarkLatestCreatedDeploying(latest.Name)
	}
}

// newestReady is the ready Revision with the highest configuration
// generation: a rollback to an older template never hides a newer one.
func newestReady(revs []servingv1.Revision) string {
	best, bestGen := "", int64(-1)
	for i := range revs {
		rev := &revs[i]
		gen, err := strconv.ParseInt(rev.Labels[servingv1.ConfigurationGenerationLabelKey], 10, 64)
		if err != nil || !rev.Status.IsReady() || rev.DeletionTimestamp != nil {
			continue
		}
		if gen > bestGen || (gen == bestGen && rev.Name > best) {
			best, bestGen = rev.Name, gen
		}
	}
	return best
}
