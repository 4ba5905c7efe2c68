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
