package webhooks

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// defaultService is Knative's Service.SetDefaults: template defaults,
// traffic defaults and who created or changed it. old is nil on create.
func defaultService(s, old *servingv1.Service, user string, cfg Config) {
	defaultRevisionSpec(&s.Spec.Template.Spec, cfg)
	s.Spec.Traffic = defaultTraffic(s.Spec.Traffic, true)
	var oldMeta *metav1.ObjectMeta
	var oldSpec *servingv1.ServiceSpec
	if old != nil {
		oldMeta, oldSpec = &old.ObjectMeta, &old.Spec
	}
	recordUser(&s.ObjectMeta, oldMeta, oldSpec, &s.Spec, user)
}

// defaultConfiguration is Knative's Configuration.SetDefaults. The user
// is recorded only on a Configuration a user wrote: one owned by a
// Service carries the Service's annotations.
func defaultConfiguration(c, old *servingv1.Configuration, user string, cfg Config) {
	defaultRevisionSpec(&c.Spec.Template.Spec, cfg)
	if len(c.OwnerReferences) > 0 {
		return
	}
	var oldMeta *metav1.ObjectMeta
	var oldSpec *servingv1.ConfigurationSpec
	if old != nil {
		oldMeta, oldSpec = &old.ObjectMeta, &old.Spec
	}
	recordUser(&c.ObjectMeta, oldMeta, oldSpec, &c.Spec, user)
}

// defaultRevision is Knative's Revision.SetDefaults; a Revision stamped
// from an already defaulted template comes out unchanged.
func defaultRevision(r, _ *servingv1.Revision, _ string, cfg Config) {
	defaultRevisionSpec(&r.Spec, cfg)
}

// defaultRoute is Knative's Route.SetDefaults, recording the user only on
// a Route a user wrote, as for Configurations.
func defaultRoute(r, old *servingv1.Route, user string, _ Config) {
	r.Spec.Traffic = defaultTraffic(r.Spec.Traffic, false)
	if len(r.OwnerReferences) > 0 {
		return
	}
	var oldMeta *metav1.ObjectMeta
	var oldSpec *servingv1.RouteSpec
	if old != nil {
		oldMeta, oldSpec = &old.ObjectMeta, &old.Spec
	}
	recordUser(&r.ObjectMeta, oldMeta, oldSpec, &r.Spec, user)
}
