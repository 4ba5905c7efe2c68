// Package endpoints keeps core/v1 Endpoints for the Services whose
// EndpointSlices knit writes itself, the reverse of Kubernetes'
// EndpointSlice mirroring, and keeps a Service answering under a second
// name (Knative's activator-service beside knit-activator).
//
// knit publishes endpoints only as EndpointSlices: the ServerlessService
// reconciler writes a Revision's public Service's (a Service without a
// selector), and in knit dev the local runtime writes every selected
// Service's, since no endpointslice controller runs there. Kubernetes'
// endpoints controller fills Endpoints only from pods, for Services with a
// selector, so nothing else writes Endpoints for those Services, and tools
// that read Endpoints (Prometheus' endpoints discovery, older ingress
// controllers, Knative's own e2e tests) would find none.
//
// Which Services: those whose slices are all written by knit
// (resources.Decide). That is the mode without a flag for it: on a cluster
// a Service with a selector always has Kubernetes' own slice, so it is
// left to Kubernetes' endpoints controller, and only knit's selectorless
// public Services are mirrored; in knit dev the local runtime's slices
// are all a selected Service has, so every Service it serves is mirrored.
// An Endpoints object is written only when it carries this package's
// endpoints.kubernetes.io/managed-by label (or does not exist yet), so a
// hand-written or Kubernetes-written one is never overwritten.
//
// The Endpoints is owned by its Service, so the garbage collector deletes
// it with the Service, and labelled endpointslice.kubernetes.io/skip-mirror
// so Kubernetes' EndpointSlice mirroring controller does not copy it back
// into a second set of slices for a selectorless Service.
//
// In knit dev the Endpoints list no address: every address there is
// loopback or link-local (which is why knit dev's slices are FQDN
// slices), and the API server refuses those in Endpoints. They still
// exist, empty, their knit.dev/omitted-endpoints annotation counting what
// they leave out; the slices stay the truth.
//
// Endpoints are read and written uncached, one GET per reconcile of a
// mirrored Service, and not watched: caching every Endpoints of a cluster
// to find knit's few would cost more than the reads. An Endpoints changed
// by hand is put right at the next change of its Service or slices.
package endpoints
