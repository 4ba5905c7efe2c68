package route

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	revresources "github.com/knitops/knit/controllers/revision/resources"
	"github.com/knitops/knit/controllers/route/resources"
	"github.com/knitops/knit/controllers/transition"
)

// RoutingStateModifiedAnnotation records when a Revision's routing state
// last changed; the GC measures last-active time from it, as Knative's.
const RoutingStateModifiedAnnotation = revresources.RoutingStateModifiedAnnotation

// readyEvents are the Route's transitions `kubectl describe` shows: Ready
// (every target serves, the hosts are known) and failed (a target is
// missing or failed, the domain template gives no host).
var readyEvents = transition.Events{Condition: duckv1.ConditionReady, Action: "Route",
	True: "RouteReady", TrueNote: "every traffic target is ready and the route's URLs are set", False: "RouteFailed"}

// Reconcile resolves the Route's targets, marks Revisions active or
// reserve, and writes the resolved traffic and URLs to status. While a
// target waits for a Revision, the previous traffic stays in status so the
// ingress keeps serving the last good split. With a rollout duration, a
// target's move to its Configuration's new Revision is spread over it
// (rollout.go), and the Route is requeued for each step.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rt := &servingv1.Route{}
	if err := r.client.Get(ctx, req.NamespacedName, rt); err != nil {
		if apierrors.IsNotFound(err) && r.certs != nil {
			// A certificate lives in knit-system, which no owner
			// reference reaches: the Route's deletion releases it.
			return ctrl.Result{}, r.certs.Release(ctx, req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if rt.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	snap, err := r.snapshot(ctx, rt)
	if err != nil {
		return ctrl.Result{}, err
	}
	before := rt.Status.DeepCopy()
	rt.Status.InitializeConditions()

	traffic, terr := resources.ResolveTraffic(rt.Spec.Traffic, snap)
	var recheck time.Duration
	switch {
	case terr != nil && terr.Unknown:
		rt.Status.MarkTrafficPending(terr.Reason, terr.Message)
	case terr != nil:
		rt.Status.MarkTrafficNotAssigned(terr.Reason, terr.Message)
	default:
		cfg := r.config.Load()
		private, err := r.privateTags(ctx, rt, cfg.Network)
		if err != nil {
			return ctrl.Result{}, err
		}
		traffic, rollout := stepRollout(rt, traffic, snap, cfg.Network, time.Now())
		url, address, withURLs, err := resources.URLs(rt, traffic, cfg, r.urlPort, private)
		if err != nil {
			rt.Status.MarkDomainTemplateError(err.Error())
			break
		}
		rt.Status.URL, rt.Status.Address, rt.Status.Traffic = url, &duckv1.Addressable{URL: address}, withURLs
		rt.Status.MarkTrafficAssigned()
		served := r.ingressServes(rt, before)
		if served {
			rt.Status.MarkIngressReady()
		} else {
			rt.Status.MarkIngressNotProgrammed()
			recheck = ingressRecheck
		}
		recheck = soonest(recheck, rollout.finish(rt, served))
		if err := r.placeholders(ctx, rt, cfg.Network); err != nil {
			return ctrl.Result{}, err
		}
		certRecheck, err := r.certificate(ctx, rt, before, cfg, private)
		if err != nil {
			return ctrl.Result{}, err
		}
		recheck = soonest(recheck, certRecheck)
	}
	if err := r.labelRevisions(ctx, rt, snap); err != nil {
		return ctrl.Result{}, err
	}
	rt.Status.ObservedGeneration = rt.Generation
	if !equality.Semantic.DeepEqual(before, &rt.Status) {
		if err := r.client.Status().Update(ctx, rt); err != nil {
			return ctrl.Result{}, fmt.Errorf("update status of Route %s: %w", req.NamespacedName, err)
		}
		readyEvents.Record(r.events, rt, &before.Status, &rt.Status.Status)
	}
	return ctrl.Result{RequeueAfter: recheck}, nil
}

// snapshot reads what rt references and nothing else of its namespace:
// the Configurations its traffic follows and their latest ready and latest
// created Revisions, the Revisions it names, the Revisions its status sends
// traffic to and those it labelled (labelRevisions may mark them active or
// reserve). A missing object is left out, for ResolveTraffic to report.
func (r *Reconciler) snapshot(ctx context.Context, rt *servingv1.Route) (resources.Snapshot, error) {
	snap := resources.Snapshot{Configurations: map[string]*servingv1.Configuration{}, Revisions: map[string]*servingv1.Revision{}}
	cfgNames, revNames := resources.References(rt.Spec.Traffic)
	for _, name := range cfgNames {
		cfg := &servingv1.Configuration{}
		if err := r.client.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: name}, cfg); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return resources.Snapshot{}, fmt.Errorf("get Configuration %s/%s: %w", rt.Namespace, name, err)
		}
		snap.Configurations[name] = cfg
		for _, latest := range []string{cfg.Status.LatestReadyRevisionName, cfg.Status.LatestCreatedRevisionName} {
			if latest != "" {
				revNames = append(revNames, latest)
			}
		}
	}
	for name := range resources.Referenced(rt.Status.Traffic) {
		revNames = append(revNames, name)
	}
	for _, name := range revNames {
		if _, ok := snap.Revisions[name]; ok {
			continue
		}
		rev := &servingv1.Revision{}
		if err := r.client.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: name}, rev); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return resources.Snapshot{}, fmt.Errorf("get Revision %s/%s: %w", rt.Namespace, name, err)
		}
		snap.Revisions[name] = rev
	}
	labelled := &servingv1.RevisionList{}
	if err := r.client.List(ctx, labelled, client.InNamespace(rt.Namespace), client.MatchingFields{routeLabelIndex: rt.Name}); err != nil {
		return resources.Snapshot{}, fmt.Errorf("list Revisions of Route %s/%s: %w", rt.Namespace, rt.Name, err)
	}
	for i := range labelled.Items {
		snap.Revisions[labelled.Items[i].Name] = &labelled.Items[i]
	}
	return snap, nil
}

// labelRevisions marks the Revisions this Route keeps active
// (resources.Active) and this Route's former ones reserve, so
// PodAutoscalers know what is reachable and the GC knows what to keep.
func (r *Reconciler) labelRevisions(ctx context.Context, rt *servingv1.Route, snap resources.Snapshot) error {
	refs := resources.Active(rt.Spec.Traffic, rt.Status.Traffic, snap)
	for name, rev := range snap.Revisions {
		state := ""
		switch {
		case refs[name]:
			state = "active"
		case rev.Labels[servingv1.RouteLabelKey] == rt.Name:
			state = "reserve"
		default:
			continue
		}
		if rev.Labels[revresources.RoutingStateLabelKey] == state {
			continue
		}
		patch := client.MergeFrom(rev.DeepCopy())
		if rev.Labels == nil {
			rev.Labels = map[string]string{}
		}
		if rev.Annotations == nil {
			rev.Annotations = map[string]string{}
		}
		rev.Labels[revresources.RoutingStateLabelKey] = state
		rev.Labels[servingv1.RouteLabelKey] = rt.Name
		rev.Annotations[RoutingStateModifiedAnnotation] = time.Now().UTC().Format(time.RFC3339)
		if err := r.client.Patch(ctx, rev, patch); err != nil {
			return fmt.Errorf("label Revision %s %s: %w", name, state, err)
		}
	}
	return nil
}
