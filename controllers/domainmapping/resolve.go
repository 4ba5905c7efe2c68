package domainmapping

import (
	"context"
	"fmt"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	servingv1beta1 "github.com/knitops/knit/api/serving/v1beta1"
	"github.com/knitops/knit/controllers/route/resources"
)

// refKind is what spec.ref may name.
type refKind int

const (
	refUnsupported refKind = iota
	refService             // serving.knative.dev Service
	refRoute               // serving.knative.dev Route
	refPlaceholder         // a Kubernetes Service, which must be a Route's placeholder
)

// kindOf classifies a reference by its group and kind; the version is
// not checked beyond parsing, as Knative's resolver does not.
func kindOf(ref servingv1beta1.KReference) refKind {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return refUnsupported
	}
	switch {
	case gv.Group == servingv1.GroupVersion.Group && ref.Kind == "Service":
		return refService
	case gv.Group == servingv1.GroupVersion.Group && ref.Kind == "Route":
		return refRoute
	case gv.Group == "" && ref.Kind == "Service":
		return refPlaceholder
	}
	return refUnsupported
}

// resolve marks ReferenceResolved and says whether spec.ref names a Route
// the ingress serves under <name>.<namespace>.svc.cluster.local, the host
// the ingress then serves the domain as. Knative resolves any Addressable
// to such a host and routes to the Kubernetes Service behind it; knit's
// ingress routes only Routes, so a Kubernetes Service must be one of a
// Route's placeholders (its own, or a tag's).
func (r *Reconciler) resolve(ctx context.Context, dm *servingv1beta1.DomainMapping) (bool, error) {
	ref := dm.Spec.Ref
	kind := kindOf(ref)
	if kind == refUnsupported {
		dm.Status.MarkReferenceNotResolved(fmt.Sprintf("%s %s is not something knit maps a domain to: a serving.knative.dev/v1 Service or Route, or a Route's own Kubernetes Service", ref.APIVersion, ref.Kind))
		return false, nil
	}
	key := types.NamespacedName{Namespace: dm.Namespace, Name: ref.Name}
	obj := kind.newObject()
	if err := r.client.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			dm.Status.MarkReferenceNotResolved(fmt.Sprintf("%s %q not found", ref.Kind, ref.Name))
			return false, nil
		}
		return false, fmt.Errorf("resolve %s %s: %w", ref.Kind, key, err)
	}
	if problem := checkAddress(obj, ref.Name, dm.Namespace); problem != "" {
		dm.Status.MarkReferenceNotResolved(fmt.Sprintf("%s %q %s", ref.Kind, ref.Name, problem))
		return false, nil
	}
	dm.Status.MarkReferenceResolved()
	return true, nil
}

func (k refKind) newObject() client.Object {
	switch k {
	case refService:
		return &servingv1.Service{}
	case refRoute:
		return &servingv1.Route{}
	default:
		return &corev1.Service{}
	}
}

// addressOf is the in-cluster address obj publishes: a Knative Service's
// or Route's status.address, or, for a Route's placeholder Service, its
// own name in the cluster's DNS. ok is false for any other Service.
func addressOf(obj client.Object) (address string, ok bool) {
	switch o := obj.(type) {
	case *servingv1.Service:
		if o.Status.Address != nil {
			return o.Status.Address.URL, true
		}
	case *servingv1.Route:
		if o.Status.Address != nil {
			return o.Status.Address.URL, true
		}
	case *corev1.Service:
		if !isPlaceholder(o) {
			return "", false
		}
		return "http://" + o.Name + "." + o.Namespace + "." + resources.ClusterLocalDomain, true
	}
	return "", true
}

// checkAddress is Knative's rule for a resolved address, which is also
// what lets the ingress find the Route by name: no path, and the host
// <name>.<namespace>.svc.cluster.local of the DomainMapping's namespace.
func checkAddress(obj client.Object, name, namespace string) string {
	address, ok := addressOf(obj)
	switch {
	case !ok:
		return "is not a Route's: knit maps a domain to a Knative Service or Route, or a Route's own Kubernetes Service"
	case address == "":
		return "has no address yet"
	}
	u, err := url.Parse(address)
	if err != nil {
		return fmt.Sprintf("address %q: %v", address, err)
	}
	if u.Path != "" && u.Path != "/" {
		return fmt.Sprintf("resolved URI %q contains a path", address)
	}
	if want := name + "." + namespace + "." + resources.ClusterLocalDomain; u.Hostname() != want {
		return fmt.Sprintf("resolved URI %q must be of the form {name}.{namespace}.%s, here %s", address, resources.ClusterLocalDomain, want)
	}
	return ""
}

// isPlaceholder says whether svc is a Route's placeholder Service: the
// Route owns it and labelled it.
func isPlaceholder(svc *corev1.Service) bool {
	if svc.Labels[servingv1.RouteLabelKey] == "" {
		return false
	}
	for _, o := range svc.OwnerReferences {
		if o.Kind == "Route" && o.Name == svc.Labels[servingv1.RouteLabelKey] && o.Controller != nil && *o.Controller {
			return true
		}
	}
	return false
}
