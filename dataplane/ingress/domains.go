package ingress

import (
	"slices"
	"strings"

	servingv1beta1 "github.com/knitops/knit/api/serving/v1beta1"
)

// mapDomains serves each DomainMapping its controller marked served
// (claimed by its namespace, reference resolved) as the Route its
// reference names: the domain gets that Route's in-cluster entry's
// targets, split and tags, with the mapping's own namespace for
// certificates and its own http-protocol. Knative sends a mapped domain
// back through the ingress under the Route's in-cluster host and the
// queue-proxy restores the original Host; knit routes it in one hop, and
// the app sees the same Host.
//
// A public Route's own host wins over a mapping of the same name (the
// operator's domain template made it, and it served first); of two
// mappings of one domain, which only a claim moving between namespaces
// can briefly show, the older wins.
func (t *Table) mapDomains(o Options, dms []servingv1beta1.DomainMapping) {
	order := make([]*servingv1beta1.DomainMapping, 0, len(dms))
	for i := range dms {
		if dms[i].Served() {
			order = append(order, &dms[i])
		}
	}
	slices.SortFunc(order, func(a, b *servingv1beta1.DomainMapping) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	for _, dm := range order {
		host := strings.ToLower(dm.Name)
		if _, taken := t.hosts[host]; taken {
			continue
		}
		route := t.private[strings.ToLower(dm.Spec.Ref.Name)+"."+dm.Namespace+"."+ClusterDomain]
		if route == nil {
			continue
		}
		t.hosts[host] = &entry{route: route.route, namespace: dm.Namespace, redirect: o.redirects(dm.Annotations),
			targets: route.targets, schedule: route.schedule, tags: route.tags}
	}
}
