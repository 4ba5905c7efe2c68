// Package resources builds an SKS's Services and public EndpointSlices;
// pure functions, no client.
package resources

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/names"
)

// Port names and numbers of the Services, Knative's.
const (
	HTTPPortName    = "http"
	MetricsPortName = "http-autometric"
	ServicePort     = 80
	MetricsPort     = 9090
	// QueueHTTPPortName and QueueMetricsPortName are the queue-proxy container ports the Services target.
	QueueHTTPPortName    = "http"
	QueueMetricsPortName = "http-autometric"
)

// PrivateServiceName is the Service over the replicas themselves,
// <sks>-private shortened to fit 63 characters (names.PrivateService).
func PrivateServiceName(sks *networkingv1alpha1.ServerlessService) string {
	return names.PrivateService(sks.Name)
}

// PublicServiceName is the Service the ingress routes to.
func PublicServiceName(sks *networkingv1alpha1.ServerlessService) string { return sks.Name }

// MakePrivateService selects the Revision's replicas; on a cluster the
// endpointslice controller fills its slices, in knit dev the local runtime.
func MakePrivateService(sks *networkingv1alpha1.ServerlessService) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: meta(sks, PrivateServiceName(sks), networkingv1alpha1.ServiceTypePrivate),
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{servingv1.RevisionLabelKey: sks.Name},
			Ports: []corev1.ServicePort{
				{Name: HTTPPortName, Protocol: corev1.ProtocolTCP, Port: ServicePort, TargetPort: intstr.FromString(QueueHTTPPortName)},
				{Name: MetricsPortName, Protocol: corev1.ProtocolTCP, Port: MetricsPort, TargetPort: intstr.FromString(QueueMetricsPortName)},
			},
		},
	}
}

// MakePublicService has no selector: the SKS writes its endpoints.
func MakePublicService(sks *networkingv1alpha1.ServerlessService) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: meta(sks, PublicServiceName(sks), networkingv1alpha1.ServiceTypePublic),
		Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{Name: HTTPPortName, Protocol: corev1.ProtocolTCP, Port: ServicePort, TargetPort: intstr.FromInt32(ServicePort)}},
		},
	}
}

// meta is the SKS's labels plus Knative's two that say whose Service this
// is and which: its EndpointSlices inherit them, and that is how a slice
// finds its SKS (ServerlessServiceLabelKey).
func meta(sks *networkingv1alpha1.ServerlessService, name, serviceType string) metav1.ObjectMeta {
	labels := map[string]string{}
	for k, v := range sks.Labels {
		labels[k] = v
	}
	labels[networkingv1alpha1.ServerlessServiceLabelKey] = sks.Name
	labels[networkingv1alpha1.ServiceTypeLabelKey] = serviceType
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       sks.Namespace,
		Labels:          labels,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sks, networkingv1alpha1.GroupVersion.WithKind("ServerlessService"))},
	}
}
