package service

import (
	"context"
	"errors"
	"fmt"
	"k8s.io/utils/ptr"
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/owned"
	"github.com/knitops/knit/controllers/service/resources"
	"github.com/knitops/knit/controllers/transition"
)

// readyEvents are the Service's transitions `kubectl describe` shows:
// Ready (its latest Revision serves at its URL) and failed (with the
// Configuration's or Route's reason and message).
var readyEvents = transition.Events{Condition: duckv1.ConditionReady, Action: "Reconcile",
	True: "ServiceReady", TrueNote: "the Service's Configuration and Route are ready", False: "ServiceFailed"}

// Reconcile reads the Service, ensures its Configuration and Route, then
// writes status from theirs.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	svc := &servingv1.Service{}
	if err := r.client.Get(ctx, req.NamespacedName, svc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if svc.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	before := svc.Status.DeepCopy()
	svc.Status.InitializeConditions()

	cfg, cfgErr := r.reconcileConfiguration(ctx, svc)
	rt, rtErr := r.reconcileRoute(ctx, svc)
	markConfiguration(&svc.Status, cfg, cfgErr, cfgGen(cfg, svc))
	markRoute(&svc.Status, rt, rtErr, rtGen(rt) && (trafficMigrated(rt, cfg) || !routeReady(rt)))
	if cfg != nil {
		svc.Status.ConfigurationStatusFields = cfg.Status.ConfigurationStatusFields
	}
	if rt != nil {
		svc.Status.RouteStatusFields = rt.Status.RouteStatusFields
	}
	svc.Status.ObservedGeneration = svc.Generation

	if !equality.Semantic.DeepEqual(before, &svc.Status) {
		if err := r.client.Status().Update(ctx, svc); err != nil {
			return ctrl.Result{}, fmt.Errorf("update status of Service %s: %w", req.NamespacedName, err)
		}
		readyEvents.Record(r.events, svc, &before.Status, &svc.Status.Status)
	}
	var notOwned *owned.NotOwnedError
	if errors.As(cfgErr, &notOwned) || errors.As(rtErr, &notOwned) {
		return ctrl.Result{}, nil // waits for the user to resolve the name clash
	}
	return ctrl.Result{}, errors.Join(cfgErr, rtErr)
}

// reconcileConfiguration keeps the Configuration's spec, labels and
// annotations the Service's: an annotation added to or removed from the
// Service alone, with no spec change, reaches it too, as in Knative
// (conformance: TestAnnotationPropagation).
func (r *Reconciler) reconcileConfiguration(ctx context.Context, svc *servingv1.Service) (*servingv1.Configuration, error) {
	return owned.Ensure(ctx, r.client, svc, "Configuration", resources.MakeConfiguration(svc), &servingv1.Configuration{},
		func(have, want *servingv1.Configuration) bool {
			return !equality.Semantic.DeepEqual(have.Spec, want.Spec) || !metadataEqual(have.ObjectMeta, want.ObjectMeta)
		},
		func(have, want *servingv1.Configuration) {
			have.Spec, have.Labels, have.Annotations = want.Spec, want.Labels, want.Annotations
		})
}

// reconcileRoute keeps the Route's spec, labels and annotations the
// Service's, as reconcileConfiguration.
func (r *Reconciler) reconcileRoute(ctx context.Context, svc *servingv1.Service) (*servingv1.Route, error) {
	return owned.Ensure(ctx, r.client, svc, "Route", resources.MakeRoute(svc), &servingv1.Route{},
		func(have, want *servingv1.Route) bool {
			return !equality.Semantic.DeepEqual(have.Spec, want.Spec) || !metadataEqual(have.ObjectMeta, want.ObjectMeta)
		},
		func(have, want *servingv1.Route) {
			have.Spec, have.Labels, have.Annotations = want.Spec, want.Labels, want.Annotations
		})
}

// metadataEqual compares what the Service decides of a child's metadata:
// its labels and annotations, none and empty alike.
func metadataEqual(have, want metav1.ObjectMeta) bool {
	return maps.Equal(have.Labels, want.Labels) && maps.Equal(have.Annotations, want.Annotations)
}

// cfgGen reports whether the Configuration has seen the Service's latest
// template (its generation observed and its spec equal to ours).
func cfgGen(cfg *servingv1.Configuration, svc *servingv1.Service) bool {
	return cfg != nil && cfg.Status.ObservedGeneration == cfg.Generation &&
		equality.Semantic.DeepEqual(cfg.Spec, svc.Spec.ConfigurationSpec)
}

// trafficMigrated reports whether the Route's traffic has followed the
// Configuration: every target that tracks the latest revision serves the
// Configuration's latest ready one. Until then the Service is not Ready,
// as in Knative (its service reconciler's "traffic not yet migrated"): a
// client that waits for Ready and then calls the Service must reach the
// new revision (conformance: TestServiceCreateAndUpdate).
func trafficMigrated(rt *servingv1.Route, cfg *servingv1.Configuration) bool {
	if rt == nil || cfg == nil || cfg.Status.LatestReadyRevisionName == "" {
		return true
	}
	for _, t := range rt.Status.Traffic {
		if ptr.Deref(t.LatestRevision, false) && t.RevisionName != cfg.Status.LatestReadyRevisionName {
			return false
		}
	}
	return true
}

// routeReady reports whether the Route says it is Ready. Only then does a
// target not yet on the latest ready revision make the Service out of
// date: a Route that is not Ready says why itself (a gradual rollout's
// RolloutInProgress among others), and RoutesReady mirrors that, as in
// Knative.
func routeReady(rt *servingv1.Route) bool {
	return rt != nil && rt.Status.GetCondition(duckv1.ConditionReady).IsTrue()
}

func rtGen(rt *servingv1.Route) bool {
	return rt != nil && rt.Status.ObservedGeneration == rt.Generation
}

// markConfiguration mirrors the Configuration's Ready on
// ConfigurationsReady, or says why it cannot be written; current is
// whether it has seen the Service's latest template.
func markConfiguration(ss *servingv1.ServiceStatus, cfg *servingv1.Configuration, err error, current bool) {
	if reason, message, ok := childFailure(err); ok {
		ss.MarkConfigurationsReadyFalse(reason, message)
		return
	}
	switch {
	case err != nil:
		ss.MarkConfigurationsReadyUnknown(servingv1.ReasonReconcileError, err.Error())
	case !current:
		ss.MarkConfigurationNotYetReady()
	default:
		ss.PropagateConfigurationStatus(&cfg.Status)
	}
}

// markRoute mirrors the Route's Ready on RoutesReady, as markConfiguration.
func markRoute(ss *servingv1.ServiceStatus, rt *servingv1.Route, err error, current bool) {
	if reason, message, ok := childFailure(err); ok {
		ss.MarkRoutesReadyFalse(reason, message)
		return
	}
	switch {
	case err != nil:
		ss.MarkRoutesReadyUnknown(servingv1.ReasonReconcileError, err.Error())
	case !current:
		ss.MarkRouteNotYetReady()
	default:
		ss.PropagateRouteStatus(&rt.Status)
	}
}

// childFailure is owned.Failure with, for a name taken by another owner,
// what the user can do about it.
func childFailure(err error) (reason, message string, ok bool) {
	reason, message, ok = owned.Failure(err)
	if reason == owned.ReasonNotOwned {
		message += "; delete it or rename the Service"
	}
	return reason, message, ok
}
