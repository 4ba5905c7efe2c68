package resources

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

// Placeholders are the Kubernetes Services that give a Route, and each of
// its tags, a name inside the cluster, as Knative's placeholder Services
// do: <route>.<namespace>.svc.cluster.local (and a tag's, named by
// tag-template) resolve, by ExternalName, to target, the ingress's
// internal listener, which routes them by Host. Every Route has them,
// public or cluster-local: the in-cluster address is how one app calls
// another.
func Placeholders(rt *servingv1.Route, n *config.Network, target string) ([]*corev1.Service, error) {
	names := []string{rt.Name}
	for _, t := range rt.Status.Traffic {
		if t.Tag == "" {
			continue
		}
		name, err := n.TagName(rt.Name, t.Tag)
		if err != nil {
			return nil, fmt.Errorf("route %s tag %s: %w", rt.Name, t.Tag, err)
		}
		names = append(names, name)
	}
	out := make([]*corev1.Service, 0, len(names))
	for _, name := range names {
		out = append(out, placeholder(rt, name, target))
	}
	return out, nil
}

func placeholder(rt *servingv1.Route, name, target string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: rt.Namespace, Name: name,
			Labels:          map[string]string{servingv1.RouteLabelKey: rt.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rt, servingv1.GroupVersion.WithKind("Route"))},
		},
		Spec: corev1.ServiceSpec{
			Type:            corev1.ServiceTypeExternalName,
			ExternalName:    target,
			SessionAffinity: corev1.ServiceAffinityNone,
			Ports:           []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(80)}},
		},
	}
}
