// Package gateway is what an isolated replica of knit dev finds at its
// gateway, the host's end of its veth pair, as a pod finds its cluster's
// DNS and Services: a DNS server that answers the names knit's ingress
// serves (Routes' in-cluster names, their public hosts, mapped domains)
// with the gateway's own address and forwards every other name to this
// machine's resolvers; and the ingress's internal listener on port 80 and
// on knit dev's ingress port, so both http://<route>.<ns>.svc.cluster.local
// and a Service's public URL answer from inside a replica. One app calls
// another as it would on a cluster.
//
// Each replica's gateway listens on that replica's host-end address and
// answers that replica alone (its pod address, the other end of the /30):
// neither this machine's network nor another replica reaches it there.
package gateway
