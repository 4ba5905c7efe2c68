// Package route reconciles Routes: it resolves each traffic target to a
// Revision, gives the route and its tags their URLs, marks which Revisions
// receive traffic, and publishes the result in status, which is the
// routing table the ingress serves.
package route
