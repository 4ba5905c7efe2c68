package webhooks

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// Fixtures shared by the table tests.

const image = "ko://github.com/knitops/knit/examples/helloworld"

// defaultedSpec is what a RevisionSpec holding one bare container becomes.
func defaultedSpec() servingv1.RevisionSpec {
	return servingv1.RevisionSpec{
		PodSpec: servingv1.PodSpec{Containers: []corev1.Container{{
			Name:           "user-container",
			Image:          image,
			Ports:          []corev1.ContainerPort{{ContainerPort: 8080}},
			ReadinessProbe: tcpProbe(),
		}}},
		ContainerConcurrency: ptr.To[int64](0),
		TimeoutSeconds:       ptr.To[int64](300),
	}
}

func tcpProbe() *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{}},
		SuccessThreshold: 1,
	}
}

func bareSpec(cs ...corev1.Container) servingv1.RevisionSpec {
	return servingv1.RevisionSpec{PodSpec: servingv1.PodSpec{Containers: cs}}
}

func service(name string, spec servingv1.RevisionSpec, traffic ...servingv1.TrafficTarget) *servingv1.Service {
	return &servingv1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: servingv1.ServiceSpec{
			ConfigurationSpec: servingv1.ConfigurationSpec{Template: servingv1.RevisionTemplateSpec{Spec: spec}},
			RouteSpec:         servingv1.RouteSpec{Traffic: traffic},
		},
	}
}

func latest(percent int64) servingv1.TrafficTarget {
	return servingv1.TrafficTarget{LatestRevision: ptr.To(true), Percent: ptr.To(percent)}
}

func pinned(rev string, percent int64) servingv1.TrafficTarget {
	return servingv1.TrafficTarget{RevisionName: rev, LatestRevision: ptr.To(false), Percent: ptr.To(percent)}
}

// messages renders each field error as Knative words it (knativeError),
// what a client reads in the refusal; knativeMessage's combining of
// several is tested on its own.
func messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, knativeError(e).Error())
	}
	return out
}
