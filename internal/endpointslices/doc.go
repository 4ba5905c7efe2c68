// Package endpointslices finds a Service's EndpointSlices in O(its own
// slices), not O(the namespace's). controller-runtime's cache answers a
// List by label selector by scanning every EndpointSlice of the namespace,
// and knit asks for one Service's slices on hot paths: the KPA for every
// Revision on every tick, the activator, the SKS reconciler, the local
// runtime. With a thousand Revisions in one namespace that scan made the
// KPA's tick quadratic. Here is a cache index of EndpointSlices by their
// kubernetes.io/service-name label, its registration on a manager's cache,
// and the one lookup every caller goes through.
package endpointslices
