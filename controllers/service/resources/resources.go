// Package resources builds the Configuration and Route a Service owns;
// pure functions, no client.
package resources

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// MakeConfiguration is the Configuration a Service owns: same name, the
// Service's template, labelled with the Service's name.
func MakeConfiguration(svc *servingv1.Service) *servingv1.Configuration {
	return &servingv1.Configuration{
		ObjectMeta: childMeta(svc),
		Spec:       *svc.Spec.ConfigurationSpec.DeepCopy(),
	}
}

// MakeRoute is the Route a Service owns. Targets that follow the latest
// revision name the Service's Configuration, as Knative's Service does.
func MakeRoute(svc *servingv1.Service) *servingv1.Route {
	spec := svc.Spec.RouteSpec.DeepCopy()
	for i := range spec.Traffic {
		t := &spec.Traffic[i]
		if t.RevisionName == "" && (t.LatestRevision == nil || *t.LatestRevision) {
			t.ConfigurationName = svc.Name
		}
	}
	return &servingv1.Route{ObjectMeta: childMeta(svc), Spec: *spec}
}

func childMeta(svc *servingv1.Service) metav1.ObjectMeta {
	labels := make(map[string]string, len(svc.Labels)+1)
	for k, v := range svc.Labels {
		labels[k] = v
	}
	labels[servingv1.ServiceLabelKey] = svc.Name
	annotations := make(map[string]string, len(svc.Annotations))
	for k, v := range svc.Annotations {
		if k != "kubectl.kubernetes.io/last-applied-configuration" {
			annotations[k] = v
		}
	}
	return metav1.ObjectMeta{
		Name:            svc.Name,
		Namespace:       svc.Namespace,
		Labels:          labels,
		Annotations:     annotations,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(svc, servingv1.GroupVersion.WithKind("Service"))},
	}
}
