// Package domainmapping reconciles DomainMappings: it claims the domain
// for the mapping's namespace (ClusterDomainClaim), resolves spec.ref to a
// Route the ingress serves, obtains or copies the domain's certificate,
// and reports all of it in status. The ingress serves a mapping's domain
// from that status alone (DomainMapping.Served), as the same Route's
// in-cluster name: one table, one certificate lookup, one way in.
package domainmapping
