package resources

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	"github.com/knitops/knit/internal/names"
)

// ManagedBy marks the public slices the SKS writes.
const ManagedBy = "knit-serverlessservice"

// PublicEndpoints picks the slices the public Service should have: the
// ready replica endpoints in Serve mode, and the activators' in Proxy mode
// or whenever no replica is ready (Knative's fallback, so a request never
// meets an empty Service). It reports whether replicas were chosen.
func PublicEndpoints(sks *networkingv1alpha1.ServerlessService, private, activators []discoveryv1.EndpointSlice) ([]discoveryv1.EndpointSlice, bool) {
	src, fromReplicas := activators, false
	if sks.Spec.Mode == networkingv1alpha1.SKSOperationModeServe && ReadyCount(private) > 0 {
		src, fromReplicas = private, true
	}
	sorted := append([]discoveryv1.EndpointSlice(nil), src...)
	sort.Slice(sorted, func(i, j int) bool {
		return sorted[i].Namespace+"/"+sorted[i].Name < sorted[j].Namespace+"/"+sorted[j].Name
	})
	out := make([]discoveryv1.EndpointSlice, 0, len(sorted))
	for _, s := range sorted {
		eps := readyEndpoints(s)
		if len(eps) == 0 {
			continue
		}
		out = append(out, mirror(sks, s, eps))
	}
	return out, fromReplicas
}

// ReadyCount is how many ready endpoints the slices hold.
func ReadyCount(slices []discoveryv1.EndpointSlice) int {
	n := 0
	for _, s := range slices {
		n += len(readyEndpoints(s))
	}
	return n
}

func readyEndpoints(s discoveryv1.EndpointSlice) []discoveryv1.Endpoint {
	var out []discoveryv1.Endpoint
	for _, ep := range s.Endpoints {
		if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
			out = append(out, discoveryv1.Endpoint{Addresses: ep.Addresses, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
		}
	}
	return out
}

// mirror copies one source slice's ready endpoints under the public
// Service, keeping only the serving port, named http.
func mirror(sks *networkingv1alpha1.ServerlessService, src discoveryv1.EndpointSlice, eps []discoveryv1.Endpoint) discoveryv1.EndpointSlice {
	var ports []discoveryv1.EndpointPort
	for _, p := range src.Ports {
		if p.Name != nil && *p.Name == HTTPPortName {
			ports = append(ports, discoveryv1.EndpointPort{Name: ptr.To(HTTPPortName), Port: p.Port, Protocol: p.Protocol})
		}
	}
	sum := sha256.Sum256([]byte(src.Namespace + "/" + src.Name))
	m := meta(sks, names.Child(PublicServiceName(sks), "-"+hex.EncodeToString(sum[:4])), networkingv1alpha1.ServiceTypePublic)
	m.Labels[discoveryv1.LabelServiceName] = PublicServiceName(sks)
	m.Labels[discoveryv1.LabelManagedBy] = ManagedBy
	return discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, Labels: m.Labels, OwnerReferences: m.OwnerReferences,
	}, AddressType: src.AddressType, Endpoints: eps, Ports: ports}
}
