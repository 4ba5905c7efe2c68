// Package serverlessservice reconciles ServerlessServices (SKS): each
// Revision gets a private Kubernetes Service over its replicas and a public
// one whose EndpointSlices the SKS writes itself — the replicas' ready
// endpoints in Serve mode, the activators' in Proxy mode — which is how a
// Revision at zero keeps an address that buffers requests.
package serverlessservice
