package webhooks

import (
	"errors"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	servingv1beta1 "github.com/knitops/knit/api/serving/v1beta1"
)

// Setup registers defaulting and validating webhooks for Service,
// Configuration, Revision, Route and DomainMapping on mgr's webhook server, at the paths
// Configurations points the API server to. mgr's scheme must hold the
// serving.knative.dev/v1 types. cfg is asked for the knobs on every
// request (FromStore in knit, so admission sees what the controllers see).
func Setup(mgr ctrl.Manager, cfg Source) error {
	dryRun := podDryRun{c: mgr.GetClient()}
	return errors.Join(
		register(mgr, hooks[*servingv1.Service]{
			kind: "Service", cfg: cfg, newObj: func() *servingv1.Service { return &servingv1.Service{} },
			defaults: defaultService, validate: validateService, check: dryRun.service,
			warn: func(s *servingv1.Service) []string { return unknownAutoscalingAnnotations(s.Spec.Template.Annotations) },
		}),
		register(mgr, hooks[*servingv1.Configuration]{
			kind: "Configuration", cfg: cfg, newObj: func() *servingv1.Configuration { return &servingv1.Configuration{} },
			defaults: defaultConfiguration, validate: validateConfiguration, check: dryRun.configuration,
			warn: func(c *servingv1.Configuration) []string {
				return unknownAutoscalingAnnotations(c.Spec.Template.Annotations)
			},
		}),
		register(mgr, hooks[*servingv1.Revision]{
			kind: "Revision", cfg: cfg, newObj: func() *servingv1.Revision { return &servingv1.Revision{} },
			defaults: defaultRevision, validate: validateRevision,
			warn: func(r *servingv1.Revision) []string { return unknownAutoscalingAnnotations(r.Annotations) },
		}),
		register(mgr, hooks[*servingv1.Route]{
			kind: "Route", cfg: cfg, newObj: func() *servingv1.Route { return &servingv1.Route{} },
			defaults: defaultRoute, validate: validateRoute,
		}),
		register(mgr, hooks[*servingv1beta1.DomainMapping]{
			kind: "DomainMapping", cfg: cfg, newObj: func() *servingv1beta1.DomainMapping { return &servingv1beta1.DomainMapping{} },
			defaults: defaultDomainMapping, validate: validateDomainMapping,
		}),
	)
}

// register serves h's defaulting and validation at the paths
// controller-runtime derives from the kind.
func register[T client.Object](mgr ctrl.Manager, h hooks[T]) error {
	return ctrl.NewWebhookManagedBy(mgr, h.newObj()).WithDefaulter(h).WithValidator(h).Complete()
}
