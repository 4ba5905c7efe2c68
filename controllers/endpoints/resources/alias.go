package resources

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/knitops/knit/internal/names"
)

// MakeAlias is a selectorless Service named name beside source, with
// source's labels and ports, owned by source so it goes with it. Its
// endpoints are AliasSlices. Only fields the API server does not default
// are set; source's ports are copied as stored, defaults filled in.
func MakeAlias(source *corev1.Service, name string) *corev1.Service {
	ports := make([]corev1.ServicePort, 0, len(source.Spec.Ports))
	for _, p := range source.Spec.Ports {
		ports = append(ports, corev1.ServicePort{Name: p.Name, Protocol: p.Protocol, AppProtocol: p.AppProtocol, Port: p.Port, TargetPort: p.TargetPort})
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: source.Namespace, Name: name, Labels: maps.Clone(source.Labels),
			OwnerReferences: []metav1.OwnerReference{OwnerReference(source)}},
		Spec: corev1.ServiceSpec{Ports: ports},
	}
}

// AliasDiffers says whether the alias as stored (have) lacks what
// MakeAlias wants of it: its ports, no selector, the labels.
func AliasDiffers(have, want *corev1.Service) bool {
	return !equality.Semantic.DeepEqual(have.Spec.Ports, want.Spec.Ports) || have.Spec.Selector != nil ||
		!equality.Semantic.DeepEqual(have.Labels, want.Labels)
}

// UpdateAlias copies what AliasDiffers compares from want onto have.
func UpdateAlias(have, want *corev1.Service) {
	have.Spec.Ports, have.Spec.Selector, have.Labels = want.Spec.Ports, nil, want.Labels
}

// AliasSlices are copies of source's slices under alias: the same
// endpoints and ports, labelled as alias's and ManagedBy, owned by alias.
// Each copy's name is derived from its source slice's, so a source slice
// keeps its copy across reconciles.
func AliasSlices(alias *corev1.Service, source []discoveryv1.EndpointSlice) []discoveryv1.EndpointSlice {
	out := make([]discoveryv1.EndpointSlice, 0, len(source))
	for _, s := range source {
		sum := sha256.Sum256([]byte(s.Name))
		out = append(out, discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: alias.Namespace, Name: names.Child(alias.Name, "-"+hex.EncodeToString(sum[:4])),
				Labels:          map[string]string{discoveryv1.LabelServiceName: alias.Name, discoveryv1.LabelManagedBy: ManagedBy},
				OwnerReferences: []metav1.OwnerReference{OwnerReference(alias)},
			},
			AddressType: s.AddressType,
			Endpoints:   deepCopyEndpoints(s.Endpoints),
			Ports:       deepCopyPorts(s.Ports),
		})
	}
	slices.SortFunc(out, func(a, b discoveryv1.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// SliceDiffers says whether a stored alias slice lacks what want holds.
// The address type cannot be changed: a slice whose type differs must be
// replaced.
func SliceDiffers(have, want *discoveryv1.EndpointSlice) bool {
	return !equality.Semantic.DeepEqual(have.Endpoints, want.Endpoints) || !equality.Semantic.DeepEqual(have.Ports, want.Ports) ||
		!equality.Semantic.DeepEqual(have.Labels, want.Labels) || !equality.Semantic.DeepEqual(have.OwnerReferences, want.OwnerReferences)
}

func deepCopyEndpoints(in []discoveryv1.Endpoint) []discoveryv1.Endpoint {
	out := make([]discoveryv1.Endpoint, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}

func deepCopyPorts(in []discoveryv1.EndpointPort) []discoveryv1.EndpointPort {
	out := make([]discoveryv1.EndpointPort, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}
