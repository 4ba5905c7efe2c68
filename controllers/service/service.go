package service

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/owned"
	"github.com/knitops/knit/controllers/service/resources"
)

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
	conds := servingv1.ServiceConditions.Manage(&svc.Status.Status)
	conds.InitializeConditions()

	cfg, cfgErr := r.reconcileConfiguration(ctx, svc)
	rt, rtErr := r.reconcileRoute(ctx, svc)
	markChild(conds, servingv1.ServiceConditionConfigurationsReady, cfgErr, cfg != nil, func() *duckv1.Status { return &cfg.Status.Status }, cfgGen(cfg, svc))
	markChild(conds, servingv1.ServiceConditionRoutesReady, rtErr, rt != nil, func() *duckv1.Status { return &rt.Status.Status }, rtGen(rt))
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
	}
	var notOwned *owned.NotOwnedError
	if errors.As(cfgErr, &notOwned) || errors.As(rtErr, &notOwned) {
		return ctrl.Result{}, nil // waits for the user to resolve the name clash
	}
	return ctrl.Result{}, errors.Join(cfgErr, rtErr)
}

func (r *Reconciler) reconcileConfiguration(ctx context.Context, svc *servingv1.Service) (*servingv1.Configuration, error) {
	return owned.Ensure(ctx, r.client, svc, "Configuration", resources.MakeConfiguration(svc), &servingv1.Configuration{},
		func(have, want *servingv1.Configuration) bool {
			return !equality.Semantic.DeepEqual(have.Spec, want.Spec) || !equality.Semantic.DeepEqual(have.Labels, want.Labels)
		},
		func(have, want *servingv1.Configuration) {
			have.Spec, have.Labels, have.Annotations = want.Spec, want.Labels, want.Annotations
		})
}

func (r *Reconciler) reconcileRoute(ctx context.Context, svc *servingv1.Service) (*servingv1.Route, error) {
	return owned.Ensure(ctx, r.client, svc, "Route", resources.MakeRoute(svc), &servingv1.Route{},
		func(have, want *servingv1.Route) bool {
			return !equality.Semantic.DeepEqual(have.Spec, want.Spec) || !equality.Semantic.DeepEqual(have.Labels, want.Labels)
		},
		func(have, want *servingv1.Route) {
			have.Spec, have.Labels, have.Annotations = want.Spec, want.Labels, want.Annotations
		})
}

// cfgGen reports whether the Configuration has seen the Service's latest
// template (its generation observed and its spec equal to ours).
func cfgGen(cfg *servingv1.Configuration, svc *servingv1.Service) bool {
	return cfg != nil && cfg.Status.ObservedGeneration == cfg.Generation &&
		equality.Semantic.DeepEqual(cfg.Spec, svc.Spec.ConfigurationSpec)
}

func rtGen(rt *servingv1.Route) bool {
	return rt != nil && rt.Status.ObservedGeneration == rt.Generation
}

// markChild mirrors a child's Ready onto the Service's condition t, or
// the reason the child cannot be written.
func markChild(conds duckv1.ConditionManager, t duckv1.ConditionType, err error, exists bool, status func() *duckv1.Status, current bool) {
	var notOwned *owned.NotOwnedError
	reason, message, failed := owned.Failure(err)
	switch {
	case errors.As(err, &notOwned):
		conds.MarkFalse(t, "NotOwned", notOwned.Error()+"; delete it or rename the Service")
	case failed:
		conds.MarkFalse(t, reason, message)
	case err != nil:
		conds.MarkUnknown(t, "ReconcileError", err.Error())
	case !exists || !current:
		conds.MarkUnknown(t, "OutOfDate", "waiting for the latest spec to be observed")
	default:
		ready := status().GetCondition(duckv1.ConditionReady)
		switch {
		case ready.IsTrue():
			conds.MarkTrue(t)
		case ready.IsFalse():
			conds.MarkFalse(t, ready.Reason, ready.Message)
		case ready != nil:
			conds.MarkUnknown(t, ready.Reason, ready.Message)
		default:
			conds.MarkUnknown(t, "Pending", "")
		}
	}
}
