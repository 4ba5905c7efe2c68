package gitrepository

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/forgeapi"
	"github.com/knitops/knit/gitsync/plan"
	"github.com/knitops/knit/gitsync/stepper"
)

// DeployContext is the commit status knit sets on each tracked branch's
// head: pending while it deploys, success once its Services serve it,
// failure when it was refused or a Revision of it failed.
const DeployContext = "knit/deploy"

// Forge is what the reconciler tells a repository's forge.
type Forge interface {
	SetStatus(ctx context.Context, sha string, s forgeapi.Status) error
}

// deployed is one Service a branch deployed, as the cache has it.
type deployed struct {
	// name is the Service's, from the inventory.
	name string
	// svc is nil until the cache has the Service.
	svc *servingv1.Service
	// rev is the Revision svc's template names, nil until it exists.
	rev *servingv1.Revision
	// rollout is the Service's stepped rollout, nil for none.
	rollout *knitv1alpha1.RolloutStatus
}

// deployStatus is the knit/deploy status branch b's head should show, and
// whether to set it: not before the head is applied or refused, and not
// again once the forge was told as much for that commit (b.Reported).
func deployStatus(b *knitv1alpha1.BranchStatus, services []deployed) (forgeapi.Status, bool) {
	want, ok := desiredDeploy(b, services)
	if !ok || told(b.Reported, b.Commit, want.State) {
		return forgeapi.Status{}, false
	}
	return want, true
}

// desiredDeploy is what the deploy of b's head amounts to: failure when it
// was refused, a Revision of it failed or its rollout was rolled back,
// success once every Service the branch deployed serves it (with the
// first Service's URL), else pending (a rollout's steps included).
// Nothing while the head is not applied yet (its images build).
func desiredDeploy(b *knitv1alpha1.BranchStatus, services []deployed) (forgeapi.Status, bool) {
	st := forgeapi.Status{Context: DeployContext}
	switch {
	case b.Commit == "":
		return st, false
	case b.Error != "":
		st.State, st.Description = forgeapi.StateFailure, "Not deployed: "+firstLine(b.Error)
		return st, true
	case b.AppliedCommit != b.Commit:
		return st, false
	}
	var failed, waiting, serving []string
	for _, d := range services {
		state, what := serviceDeploy(b.Commit, d)
		switch state {
		case forgeapi.StateFailure:
			failed = append(failed, what)
		case forgeapi.StatePending:
			waiting = append(waiting, what)
		default:
			serving = append(serving, what)
			if st.TargetURL == "" {
				st.TargetURL = d.svc.Status.URL
			}
		}
	}
	switch {
	case len(failed) > 0:
		st.State, st.Description, st.TargetURL = forgeapi.StateFailure, strings.Join(failed, "; "), ""
	case len(waiting) > 0:
		st.State, st.Description, st.TargetURL = forgeapi.StatePending, "Deploying "+strings.Join(waiting, ", "), ""
	case len(serving) > 0:
		st.State, st.Description = forgeapi.StateSuccess, "Serving "+strings.Join(serving, ", ")
	default:
		st.State, st.Description = forgeapi.StateSuccess, "Applied; no Services to wait for"
	}
	return st, true
}

// serviceDeploy is where one Service stands with commit: success (what
// names the Revision serving it), failure (what says why) or pending (what
// names what it waits for).
func serviceDeploy(commit string, d deployed) (forgeapi.State, string) {
	if d.svc == nil || d.svc.Annotations[plan.CommitAnnotation] != commit {
		return forgeapi.StatePending, d.name // the cache has not seen the apply yet
	}
	name := d.svc.Spec.Template.Name
	if name == "" {
		name = d.svc.Status.LatestCreatedRevisionName
	}
	if name == "" || d.rev == nil || d.rev.Name != name {
		return forgeapi.StatePending, cmp.Or(name, d.name)
	}
	if ro := d.rollout; ro != nil && ro.Revision == name {
		switch ro.Phase {
		case knitv1alpha1.CanaryRolledBack:
			return forgeapi.StateFailure, fmt.Sprintf("%s rolled back, %s serves: %s", name, ro.Stable, ro.Message)
		case knitv1alpha1.CanaryProgressing:
			return forgeapi.StatePending, fmt.Sprintf("%s (%s)", name, stepper.Progress(&ro.CanaryStatus))
		}
	}
	ready := d.rev.Status.GetCondition(duckv1.ConditionReady)
	switch {
	case ready.IsFalse():
		return forgeapi.StateFailure, fmt.Sprintf("%s failed: %s", name, cmp.Or(ready.Message, ready.Reason))
	case ready.IsTrue() && serves(d.svc, name):
		return forgeapi.StateSuccess, name
	}
	return forgeapi.StatePending, name
}

// serves: svc's status is current, Ready (its Route's traffic migrated and
// its ingress serving), and revision is its latest ready one.
func serves(svc *servingv1.Service, revision string) bool {
	return svc.Status.ObservedGeneration == svc.Generation && svc.Status.LatestReadyRevisionName == revision &&
		svc.Status.GetCondition(duckv1.ConditionReady).IsTrue()
}

// told reports whether the forge already shows state for commit: the same
// state, or an outcome (success, failure) where state is pending again
// only because the cache lags.
func told(r *knitv1alpha1.DeployReport, commit string, state forgeapi.State) bool {
	if r == nil || r.Commit != commit {
		return false
	}
	return r.State == string(state) || state == forgeapi.StatePending && r.State != string(forgeapi.StatePending)
}

// reportDeploys sets the knit/deploy status of each tracked branch's head
// where it moved, and records what it told in the branch's status. A
// repository without a forge client (no forge provider, no token) gets
// nothing. A forge error is logged and returned, for a retry with backoff;
// the other branches are told regardless. st remembers what was told, for
// passes that read the repository before its last status write.
func (r *Reconciler) reportDeploys(ctx context.Context, repo *knitv1alpha1.GitRepository, st *remembered) error {
	if r.forges == nil {
		return nil
	}
	var (
		f     Forge
		asked bool
		errs  []error
	)
	for _, name := range trackedBranches(repo) {
		b := repo.Status.Branch(name)
		if b == nil || b.Commit != st.fetched.Heads[name] {
			continue // read from a cache behind this process's last apply: its status write will conflict
		}
		if t, ok := st.told[name]; ok && t.Commit == b.Commit {
			b.Reported = &t // what this process told last, which a lagging cache may not show yet
		}
		want, ok := deployStatus(b, r.deployedServices(ctx, repo, name))
		if !ok {
			continue
		}
		if !asked { // read the Secret only when there is something to tell
			asked = true
			var err error
			if f, err = r.forges(ctx, repo); err != nil {
				// Only knit's own words (no Secret, no token): nothing to retry
				// until the repository or its Secret changes.
				log.FromContext(ctx).V(1).Info("No forge client: deploys are not reported", "err", err.Error())
				return nil
			}
		}
		if f == nil {
			return nil
		}
		if err := f.SetStatus(ctx, b.Commit, want); err != nil {
			// The forge's answer (bounded, sanitized, never the token) is
			// for the log only.
			log.FromContext(ctx).Info("Forge not told of the deploy; retrying", "branch", name, "commit", b.Commit,
				"state", want.State, "summary", forgeapi.Summary(err), "err", err.Error())
			errs = append(errs, fmt.Errorf("set %s on %s@%.7s: %w", DeployContext, name, b.Commit, err))
			continue
		}
		b.Reported = &knitv1alpha1.DeployReport{Commit: b.Commit, State: string(want.State)}
		if st.told == nil {
			st.told = map[string]knitv1alpha1.DeployReport{}
		}
		st.told[name] = *b.Reported
	}
	return errors.Join(errs...)
}

// deployedServices are the Services the last apply of branch deployed,
// with the Revisions their templates name, from the cache.
func (r *Reconciler) deployedServices(ctx context.Context, repo *knitv1alpha1.GitRepository, branch string) []deployed {
	var out []deployed
	for _, ref := range repo.Status.Inventory {
		if ref.Branch != branch || !isService(ref) || ref.PullRequest != 0 {
			continue
		}
		d := deployed{name: ref.Name, svc: r.liveService(ctx, ref.Namespace, ref.Name), rollout: repo.Status.Rollout(branch, ref.Name)}
		if d.svc != nil {
			name := cmp.Or(d.svc.Spec.Template.Name, d.svc.Status.LatestCreatedRevisionName)
			rev := &servingv1.Revision{}
			if name != "" && r.client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: name}, rev) == nil {
				d.rev = rev
			}
		}
		out = append(out, d)
	}
	return out
}
