// Package resources computes what the endpoints package writes: a
// Service's Endpoints from its EndpointSlices, and a Service's alias and
// its slices. Pure functions, no client.
package resources

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
)

// MaxAddresses is how many addresses an Endpoints holds at most, ready
// ones kept first: Kubernetes' endpoints controller's cap (its
// maxCapacity), past which it drops addresses and sets the
// endpoints.kubernetes.io/over-capacity annotation, as MakeEndpoints does.
const MaxAddresses = 1000

// Mirrored is what a Service's slices say in core/v1 Endpoints terms.
type Mirrored struct {
	Subsets []corev1.EndpointSubset
	// Omitted counts endpoints left out because Endpoints cannot hold
	// their address: not an IP literal, or an IP the API server refuses in
	// Endpoints (ValidateEndpointIP: unspecified, loopback, link-local,
	// link-local multicast). Every address of knit dev's replicas
	// (127.0.0.1, or 169.254.64.0/18 when isolated) and of its activator
	// is such an address: the reason knit dev publishes them as FQDN
	// slices, and why its Endpoints list no address at all.
	Omitted int
	// Truncated says addresses past MaxAddresses were dropped.
	Truncated bool
}

// Subsets converts slices to Endpoints subsets: each endpoint's first
// address (the API makes the others interchangeable with it) under the
// ports of its slice, ready ones in addresses and the rest in
// notReadyAddresses. An endpoint that is terminating is left out unless
// its slice still calls it ready, which only a Service with
// publishNotReadyAddresses does: Kubernetes' endpoints controller keeps
// those pods too. Slices with the same ports share a subset; an address
// in two of them is listed once, ready if either says so. The result is
// sorted, so equal slices give equal subsets whatever order they came in.
func Subsets(in []discoveryv1.EndpointSlice) Mirrored {
	var m Mirrored
	groups := map[string]*group{}
	for _, s := range sortedByName(in) {
		ports := endpointPorts(s.Ports)
		key := portsKey(ports)
		for _, ep := range s.Endpoints {
			ready := ptr.Deref(ep.Conditions.Ready, true) // nil is ready, per the EndpointSlice API
			if len(ep.Addresses) == 0 || (ptr.Deref(ep.Conditions.Terminating, false) && !ready) {
				continue
			}
			ip, ok := storableIP(ep.Addresses[0])
			if !ok {
				m.Omitted++
				continue
			}
			g := groups[key]
			if g == nil {
				g = &group{ports: ports, ready: map[string]corev1.EndpointAddress{}, notReady: map[string]corev1.EndpointAddress{}}
				groups[key] = g
			}
			g.add(address(ip, ep), ready)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(groups)) {
		m.Subsets = append(m.Subsets, groups[key].subset())
	}
	m.Subsets, m.Truncated = truncate(m.Subsets)
	return m
}

// group is one subset being built: addresses by IP.
type group struct {
	ports           []corev1.EndpointPort
	ready, notReady map[string]corev1.EndpointAddress
}

// add keeps the first sighting of an IP, moved to ready if a later one is.
func (g *group) add(a corev1.EndpointAddress, ready bool) {
	if _, ok := g.ready[a.IP]; ok {
		return
	}
	if ready {
		if earlier, ok := g.notReady[a.IP]; ok {
			a = earlier
			delete(g.notReady, a.IP)
		}
		g.ready[a.IP] = a
		return
	}
	if _, ok := g.notReady[a.IP]; !ok {
		g.notReady[a.IP] = a
	}
}

func (g *group) subset() corev1.EndpointSubset {
	return corev1.EndpointSubset{Addresses: sortedAddresses(g.ready), NotReadyAddresses: sortedAddresses(g.notReady), Ports: g.ports}
}

func address(ip string, ep discoveryv1.Endpoint) corev1.EndpointAddress {
	a := corev1.EndpointAddress{IP: ip, Hostname: ptr.Deref(ep.Hostname, ""), NodeName: ep.NodeName}
	if ep.TargetRef != nil {
		a.TargetRef = ep.TargetRef.DeepCopy()
	}
	if a.NodeName != nil {
		a.NodeName = ptr.To(*a.NodeName)
	}
	return a
}

// storableIP is addr in the canonical form the API server stores without
// a warning, or false when Endpoints cannot hold it (see Mirrored.Omitted).
func storableIP(addr string) (string, bool) {
	ip, err := netip.ParseAddr(addr)
	if err != nil || ip.Zone() != "" {
		return "", false
	}
	ip = ip.Unmap()
	if ip.IsUnspecified() || ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() {
		return "", false
	}
	return ip.String(), true
}

// endpointPorts are a slice's ports as Endpoints ports, sorted. A slice
// port without a number means "every port", which Endpoints cannot say:
// it is left out. A port without a protocol is TCP, the API's default.
func endpointPorts(in []discoveryv1.EndpointPort) []corev1.EndpointPort {
	var out []corev1.EndpointPort
	for _, p := range in {
		if p.Port == nil {
			continue
		}
		out = append(out, corev1.EndpointPort{Name: ptr.Deref(p.Name, ""), Port: *p.Port,
			Protocol: ptr.Deref(p.Protocol, corev1.ProtocolTCP), AppProtocol: copyString(p.AppProtocol)})
	}
	slices.SortFunc(out, func(a, b corev1.EndpointPort) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.Port, b.Port), strings.Compare(string(a.Protocol), string(b.Protocol)))
	})
	return out
}

func portsKey(ports []corev1.EndpointPort) string {
	var b strings.Builder
	for _, p := range ports {
		fmt.Fprintf(&b, "%s/%d/%s/%s;", p.Name, p.Port, p.Protocol, ptr.Deref(p.AppProtocol, ""))
	}
	return b.String()
}

// truncate keeps MaxAddresses addresses, ready ones first, in order, and
// drops the subsets left empty.
func truncate(subsets []corev1.EndpointSubset) ([]corev1.EndpointSubset, bool) {
	total := 0
	for _, s := range subsets {
		total += len(s.Addresses) + len(s.NotReadyAddresses)
	}
	if total <= MaxAddresses {
		return subsets, false
	}
	room := MaxAddresses
	take := func(a []corev1.EndpointAddress) []corev1.EndpointAddress {
		n := min(len(a), room)
		room -= n
		if n == 0 {
			return nil
		}
		return a[:n]
	}
	for i := range subsets {
		subsets[i].Addresses = take(subsets[i].Addresses)
	}
	for i := range subsets {
		subsets[i].NotReadyAddresses = take(subsets[i].NotReadyAddresses)
	}
	return slices.DeleteFunc(subsets, func(s corev1.EndpointSubset) bool {
		return len(s.Addresses) == 0 && len(s.NotReadyAddresses) == 0
	}), true
}

func sortedAddresses(m map[string]corev1.EndpointAddress) []corev1.EndpointAddress {
	if len(m) == 0 {
		return nil
	}
	ips := slices.Collect(maps.Keys(m))
	slices.SortFunc(ips, func(a, b string) int { return netip.MustParseAddr(a).Compare(netip.MustParseAddr(b)) })
	out := make([]corev1.EndpointAddress, 0, len(m))
	for _, ip := range ips {
		out = append(out, m[ip])
	}
	return out
}

func sortedByName(in []discoveryv1.EndpointSlice) []discoveryv1.EndpointSlice {
	out := slices.Clone(in)
	slices.SortFunc(out, func(a, b discoveryv1.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func copyString(s *string) *string {
	if s == nil {
		return nil
	}
	return ptr.To(*s)
}
