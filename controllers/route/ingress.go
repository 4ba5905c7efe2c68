package route

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// IngressState is an ingress that says which version of a Route it
// serves: knit dev's, whose router runs in the controllers' process.
type IngressState interface {
	// Programmed says whether the ingress serves Route namespace/name as
	// its version resourceVersion says.
	Programmed(namespace, name, resourceVersion string) bool
}

// ingressRecheck is how soon a Route whose traffic the ingress has not
// loaded yet is looked at again. The ingress rebuilds its table on the
// Route's own status write, so this is a few rounds at most.
const ingressRecheck = 20 * time.Millisecond

// ingressServes says whether the ingress serves rt as its status is
// about to say (before: its status as read). A Route is Ready only then,
// as Knative's waits for its KIngress: a client that sees it Ready gets
// its traffic, not a 404. The ingress builds its table from the Routes'
// status, so new traffic is written first with IngressReady Unknown, and
// the pass after the ingress loaded that version marks it Ready; a Route
// Ready for the traffic it keeps stays Ready, whatever the ingress's
// table has seen of later writes that change nothing it routes by.
func (r *Reconciler) ingressServes(rt *servingv1.Route, before *servingv1.RouteStatus) bool {
	if r.ingress == nil {
		return true
	}
	if routingChanged(before, &rt.Status) {
		return false
	}
	if c := before.GetCondition(servingv1.RouteConditionIngressReady); c != nil && c.IsTrue() {
		return true
	}
	return r.ingress.Programmed(rt.Namespace, rt.Name, rt.ResourceVersion)
}

// routingChanged says whether the status an ingress routes by (the URL
// and the traffic with its tags' URLs) differs between before and after.
func routingChanged(before, after *servingv1.RouteStatus) bool {
	return !equality.Semantic.DeepEqual(before.URL, after.URL) || !equality.Semantic.DeepEqual(before.Traffic, after.Traffic)
}

// soonest is the sooner of two requeue delays, 0 being none.
func soonest(a, b time.Duration) time.Duration {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}
