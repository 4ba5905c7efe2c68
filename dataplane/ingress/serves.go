package ingress

import "strings"

// Serves says whether the internal listener (Internal) answers host,
// given lower case without a port: a Route's public or in-cluster name,
// a tag's, or a mapped domain. knit dev's replica gateways resolve
// exactly these names to themselves.
func (r *Router) Serves(host string) bool {
	t := r.table.Load()
	host = strings.ToLower(host)
	return t.hosts[host] != nil || t.private[host] != nil
}

// Programmed says whether the router serves Route namespace/name as the
// Route's resourceVersion says: its table was built from that version.
// A Route is Ready only once the ingress serves what its status says, as
// Knative's is once its KIngress is; knit dev's Route reconciler, in the
// same process, asks here rather than probing.
func (r *Router) Programmed(namespace, name, resourceVersion string) bool {
	t := r.table.Load()
	return t != nil && t.routes[namespace+"/"+name] == resourceVersion
}
