package endpointslices

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Managers whose EndpointSlices knit dials. A slice is found by its
// kubernetes.io/service-name label alone, which anyone allowed to write
// EndpointSlices in a namespace can set; without this list such a slice
// would make the ingress, the activator or the autoscaler connect to an
// address of the writer's choosing from inside knit-system.
var trustedManagers = map[string]bool{
	"endpointslice-controller.k8s.io": true, // Kubernetes, for Services with a selector
	"knit-serverlessservice":          true, // the SKS's public slices (controllers/serverlessservice/resources.ManagedBy)
	"knit-local-runtime":              true, // knit dev's replicas (local/runtime.ManagedBy)
	"knit-dev":                        true, // knit dev's activator (local/dev)
	"knit-endpoints":                  true, // copies of knit's own slices under Knative's names (controllers/endpoints.ManagedBy), made only from trusted ones
}

// ReplicaNetworks is the link-local range knit dev's isolated replicas
// get their /30s from (local/runtime's pool), clear of 169.254.169.254.
var ReplicaNetworks = netip.MustParsePrefix("169.254.64.0/18")

// ErrUntrusted is wrapped by Check's refusals.
var ErrUntrusted = errors.New("endpointslice not trusted")

// Check says why knit must not dial a slice's endpoints, or nil. The
// slice must be written by a trusted manager (its
// endpointslice.kubernetes.io/managed-by label) and every address must be
// an IP literal: an FQDN slice naming a host would have knit resolve and
// reach any name. FQDN slices holding IP literals stay allowed, because
// the API refuses loopback IPs in IPv4 slices and knit dev publishes its
// local replicas that way. Link-local, multicast and unspecified
// addresses are refused too: no pod lives there, and link-local is where
// clouds serve instance metadata. The one link-local range allowed is
// ReplicaNetworks, where knit dev puts its isolated replicas; it holds no
// metadata address.
func Check(s *discoveryv1.EndpointSlice) error {
	if m := s.Labels[discoveryv1.LabelManagedBy]; !trustedManagers[m] {
		return fmt.Errorf("%w: managed by %q, not Kubernetes' endpointslice controller or knit", ErrUntrusted, m)
	}
	switch s.AddressType {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN:
	default:
		return fmt.Errorf("%w: address type %q", ErrUntrusted, s.AddressType)
	}
	for _, ep := range s.Endpoints {
		for _, a := range ep.Addresses {
			if err := checkAddress(a); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkAddress(a string) error {
	ip, err := netip.ParseAddr(a)
	if err != nil || ip.Zone() != "" {
		return fmt.Errorf("%w: address %q is not an IP address", ErrUntrusted, a)
	}
	ip = ip.Unmap() // ::ffff:169.254.169.254 is 169.254.169.254
	if ReplicaNetworks.Contains(ip) {
		return nil
	}
	if ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() {
		return fmt.Errorf("%w: address %s is link-local, multicast or unspecified", ErrUntrusted, a)
	}
	return nil
}

// Trusted returns the slices Check accepts, in order. It allocates only
// when it drops one. Each refused slice is logged once per
// resourceVersion, at error level through ctx's logger: a refusal is
// either a misconfigured tool or someone probing, and a rebuild per event
// must not repeat it.
func Trusted(ctx context.Context, slices []discoveryv1.EndpointSlice) []discoveryv1.EndpointSlice {
	for i := range slices {
		if Check(&slices[i]) != nil {
			return trustedSlow(ctx, slices, i)
		}
	}
	return slices
}

func trustedSlow(ctx context.Context, slices []discoveryv1.EndpointSlice, first int) []discoveryv1.EndpointSlice {
	out := make([]discoveryv1.EndpointSlice, first, len(slices))
	copy(out, slices[:first])
	for i := first; i < len(slices); i++ {
		s := &slices[i]
		if err := Check(s); err != nil {
			logRefusal(ctx, s, err)
			continue
		}
		out = append(out, *s)
	}
	return out
}

// refused remembers the slices already logged, by namespace/name and
// resourceVersion. A writer updating a refused slice in a loop makes a
// new version each time, so the memory is bounded: past maxRemembered
// entries it starts afresh, and a slice may be logged again.
var refused = struct {
	mu   sync.Mutex
	seen map[string]bool
}{seen: map[string]bool{}}

const maxRemembered = 4096

func logRefusal(ctx context.Context, s *discoveryv1.EndpointSlice, err error) {
	key := types.NamespacedName{Namespace: s.Namespace, Name: s.Name}.String() + "@" + s.ResourceVersion
	refused.mu.Lock()
	seen := refused.seen[key]
	if !seen {
		if len(refused.seen) >= maxRemembered {
			clear(refused.seen)
		}
		refused.seen[key] = true
	}
	refused.mu.Unlock()
	if seen {
		return
	}
	log.FromContext(ctx).Error(err, "Ignoring an EndpointSlice knit does not trust",
		"endpointSlice", s.Namespace+"/"+s.Name, "service", s.Labels[discoveryv1.LabelServiceName])
}
