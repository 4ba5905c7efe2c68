// Package names derives the names of the objects knit makes for another
// (a Configuration's Revisions, a Revision's Deployment, an SKS's private
// Service) by Knative's rule, so they fit Kubernetes' 63 characters
// whatever the parent is called and are the names Knative's tools and
// conformance tests look for. Every writer and every reader of such a
// name calls this package: a name derived twice by hand is a name that
// one day differs.
package names
