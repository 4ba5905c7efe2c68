package resources

import (
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	sksresources "github.com/knitops/knit/controllers/serverlessservice/resources"
)

// ManagedBy marks what this package writes: the Endpoints (under
// LabelManagedBy) and the alias slices (under endpointslice's
// managed-by).
const ManagedBy = "knit-endpoints"

// LabelManagedBy is the label Kubernetes' endpoints controller sets to
// "endpoint-controller" on the Endpoints it writes; knit's say ManagedBy,
// and an Endpoints is updated only when it does (Ours).
const LabelManagedBy = "endpoints.kubernetes.io/managed-by"

// AnnotationOmitted, on a mirrored Endpoints, counts the endpoints of its
// slices it cannot list (Mirrored.Omitted): in knit dev all of them, so
// `kubectl describe endpoints` says why it is empty.
const AnnotationOmitted = "knit.dev/omitted-endpoints"

// knitWriters are the endpointslice.kubernetes.io/managed-by values of
// the slices knit writes. No Kubernetes controller writes Endpoints for a
// Service served by these alone.
var knitWriters = map[string]bool{
	sksresources.ManagedBy: true, // the ServerlessService's public slices
	"knit-local-runtime":   true, // knit dev's replicas (local/runtime.ManagedBy)
	"knit-dev":             true, // knit dev's activator (local/dev)
	ManagedBy:              true, // this package's alias slices
}

// ByKnit says whether knit wrote the slice.
func ByKnit(s *discoveryv1.EndpointSlice) bool {
	return knitWriters[s.Labels[discoveryv1.LabelManagedBy]]
}

// Decision is what to do with a Service's Endpoints.
type Decision int

const (
	// Leave: someone else writes them.
	Leave Decision = iota
	// Refresh: update knit's Endpoints if there is one, create none.
	Refresh
	// Mirror: create or update knit's Endpoints.
	Mirror
)

// Decide says whose the Endpoints of svc are, from who writes its slices.
// A slice by anyone but knit means Kubernetes serves the Service: its
// endpointslice controller writes a slice (empty if need be) for every
// Service with a selector, and its endpoints controller writes that
// Service's Endpoints; its mirroring controller writes the slices of a
// selectorless Service whose Endpoints someone wrote by hand. Slices all
// by knit are mirrored. With no slice at all, an Endpoints knit wrote
// before is emptied (the last replica went), but none is made: the
// Service may be one Kubernetes has not written a slice for yet.
// ExternalName Services have no endpoints.
func Decide(svc *corev1.Service, slices []discoveryv1.EndpointSlice) Decision {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return Leave
	}
	for i := range slices {
		if !ByKnit(&slices[i]) {
			return Leave
		}
	}
	if len(slices) == 0 {
		return Refresh
	}
	return Mirror
}

// MakeEndpoints is svc's Endpoints holding m: named and labelled like
// the Service, as Kubernetes' endpoints controller does (plus its
// headless label), with skip-mirror so its EndpointSlice mirroring
// controller leaves it alone, and owned by the Service so they are
// deleted together.
func MakeEndpoints(svc *corev1.Service, m Mirrored) *corev1.Endpoints {
	labels := maps.Clone(svc.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		labels[corev1.IsHeadlessService] = ""
	}
	labels[discoveryv1.LabelSkipMirror] = "true"
	labels[LabelManagedBy] = ManagedBy
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{OwnerReference(svc)}},
		Subsets: m.Subsets,
	}
	if m.Truncated {
		metav1.SetMetaDataAnnotation(&ep.ObjectMeta, corev1.EndpointsOverCapacity, "truncated")
	}
	if m.Omitted > 0 {
		metav1.SetMetaDataAnnotation(&ep.ObjectMeta, AnnotationOmitted, strconv.Itoa(m.Omitted))
	}
	return ep
}

// OwnerReference makes svc the controller of what this package writes
// for it. Without blockOwnerDeletion: nothing needs a Service's deletion
// to wait for its Endpoints, and setting it would need the right to
// update services/finalizers on clusters enforcing owner references.
func OwnerReference(svc *corev1.Service) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID, Controller: ptr.To(true)}
}

// Ours says whether knit wrote the Endpoints and may write it again.
func Ours(ep *corev1.Endpoints) bool { return ep.Labels[LabelManagedBy] == ManagedBy }

// managedAnnotations are the annotations MakeEndpoints sets or clears;
// any other belongs to whoever set it.
var managedAnnotations = []string{corev1.EndpointsOverCapacity, AnnotationOmitted}

// Differs says whether have, as stored, is not yet want.
func Differs(have, want *corev1.Endpoints) bool {
	for _, k := range managedAnnotations {
		h, hok := have.Annotations[k]
		w, wok := want.Annotations[k]
		if h != w || hok != wok {
			return true
		}
	}
	return !equality.Semantic.DeepEqual(have.Labels, want.Labels) ||
		!equality.Semantic.DeepEqual(have.OwnerReferences, want.OwnerReferences) ||
		!equality.Semantic.DeepEqual(have.Subsets, want.Subsets)
}

// Update makes have want, keeping annotations it does not manage.
func Update(have, want *corev1.Endpoints) {
	have.Labels, have.OwnerReferences, have.Subsets = want.Labels, want.OwnerReferences, want.Subsets
	for _, k := range managedAnnotations {
		if v, ok := want.Annotations[k]; ok {
			metav1.SetMetaDataAnnotation(&have.ObjectMeta, k, v)
		} else {
			delete(have.Annotations, k)
		}
	}
}
