//go:build !unit

package domainmapping

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	netv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	servingv1beta1 "github.com/knitops/knit/api/serving/v1beta1"
)

// TestDomainMappingClaimsResolvesAndReleases follows Knative's
// conformance test's story through the reconciler alone: a mapping of a
// Service with an address is Ready at http://<domain>; a second mapping
// of the same domain in another namespace is refused its claim and
// waits; deleting the first frees the domain and the second takes it.
func TestDomainMappingClaimsResolvesAndReleases(t *testing.T) {
	k8s, store := start(t)
	ctx := context.Background()
	if err := store.Update("config-network", map[string]string{"autocreate-cluster-domain-claims": "true"}); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"shop", "rival"} {
		mustCreate(t, k8s, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		knativeService(t, k8s, ns, "web")
	}
	const domain = "shop.example.org"
	mustCreate(t, k8s, mapping("shop", domain, "serving.knative.dev/v1", "Service", "web"))
	ready(t, k8s, "shop", domain)
	first := get(t, k8s, "shop", domain)
	if first.Status.URL != "http://shop.example.org:8080" || first.Status.Address == nil || first.Status.Address.URL != first.Status.URL {
		t.Errorf("url %q, address %+v; want http://shop.example.org:8080 twice", first.Status.URL, first.Status.Address)
	}
	claim := &netv1alpha1.ClusterDomainClaim{}
	if err := k8s.Get(ctx, types.NamespacedName{Name: domain}, claim); err != nil || claim.Spec.Namespace != "shop" {
		t.Fatalf("claim %+v (%v), want one for namespace shop", claim.Spec, err)
	}

	mustCreate(t, k8s, mapping("rival", domain, "serving.knative.dev/v1", "Service", "web"))
	condition(t, k8s, "rival", domain, servingv1beta1.DomainMappingConditionDomainClaimed, corev1.ConditionFalse, servingv1beta1.ReasonDomainAlreadyClaimed)
	if get(t, k8s, "rival", domain).Served() {
		t.Error("the second namespace's mapping is served")
	}

	if err := k8s.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	ready(t, k8s, "rival", domain)
	if err := k8s.Get(ctx, types.NamespacedName{Name: domain}, claim); err != nil || claim.Spec.Namespace != "rival" {
		t.Fatalf("claim %+v (%v), want it moved to namespace rival", claim.Spec, err)
	}
}

// Without autocreate a domain no claim names stays unclaimed, saying how
// to fix it; an operator's claim then hands it over, and deleting the
// mapping leaves the operator's claim alone.
func TestDomainMappingWaitsForAnOperatorsClaim(t *testing.T) {
	k8s, _ := start(t)
	ctx := context.Background()
	mustCreate(t, k8s, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
	knativeService(t, k8s, "shop", "web")
	const domain = "www.example.org"
	mustCreate(t, k8s, mapping("shop", domain, "serving.knative.dev/v1", "Service", "web"))
	condition(t, k8s, "shop", domain, servingv1beta1.DomainMappingConditionDomainClaimed, corev1.ConditionFalse, servingv1beta1.ReasonDomainClaimFailed)
	mustCreate(t, k8s, &netv1alpha1.ClusterDomainClaim{ObjectMeta: metav1.ObjectMeta{Name: domain}, Spec: netv1alpha1.ClusterDomainClaimSpec{Namespace: "shop"}})
	ready(t, k8s, "shop", domain)
	if err := k8s.Delete(ctx, get(t, k8s, "shop", domain)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the mapping is gone", func(ctx context.Context) (bool, string) {
		err := k8s.Get(ctx, types.NamespacedName{Namespace: "shop", Name: domain}, &servingv1beta1.DomainMapping{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	if err := k8s.Get(ctx, types.NamespacedName{Name: domain}, &netv1alpha1.ClusterDomainClaim{}); err != nil {
		t.Errorf("the operator's claim: %v, want it kept", err)
	}
}

// What spec.ref may name: a Route, a Route's placeholder Service; not a
// Service of someone else's, a missing object or another kind, each
// refused with words that say which.
func TestDomainMappingResolvesReferences(t *testing.T) {
	k8s, store := start(t)
	if err := store.Update("config-network", map[string]string{"autocreate-cluster-domain-claims": "true"}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, k8s, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
	route := &servingv1.Route{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api"}}
	mustCreate(t, k8s, route)
	route.Status.Address = &duckv1.Addressable{URL: "http://api.shop.svc.cluster.local"}
	if err := k8s.Status().Update(context.Background(), route); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, k8s, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api-placeholder", Labels: map[string]string{servingv1.RouteLabelKey: "api"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "serving.knative.dev/v1", Kind: "Route", Name: "api", UID: route.UID, Controller: ptrTo(true)}}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "ingress.example"},
	})
	mustCreate(t, k8s, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 5432}}}})

	mustCreate(t, k8s, mapping("shop", "api.example.org", "serving.knative.dev/v1", "Route", "api"))
	mustCreate(t, k8s, mapping("shop", "tag.example.org", "v1", "Service", "api-placeholder"))
	ready(t, k8s, "shop", "api.example.org")
	ready(t, k8s, "shop", "tag.example.org")
	for domain, ref := range map[string][3]string{
		"db.example.org":      {"v1", "Service", "db"},
		"missing.example.org": {"serving.knative.dev/v1", "Service", "nothing"},
		"cfg.example.org":     {"serving.knative.dev/v1", "Configuration", "api"},
	} {
		mustCreate(t, k8s, mapping("shop", domain, ref[0], ref[1], ref[2]))
		condition(t, k8s, "shop", domain, servingv1beta1.DomainMappingConditionReferenceResolved, corev1.ConditionFalse, servingv1beta1.ReasonResolveFailed)
	}
}

func ptrTo[T any](v T) *T { return &v }

func mapping(ns, domain, apiVersion, kind, name string) *servingv1beta1.DomainMapping {
	return &servingv1beta1.DomainMapping{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: domain},
		Spec: servingv1beta1.DomainMappingSpec{Ref: servingv1beta1.KReference{
			APIVersion: apiVersion, Kind: kind, Name: name, Namespace: ns}},
	}
}

// knativeService makes a Knative Service whose status has the address
// the Route reconciler would give it.
func knativeService(t *testing.T, k8s client.Client, ns, name string) {
	t.Helper()
	svc := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	svc.Spec.Template.Spec.Containers = []corev1.Container{{Image: "registry.example/web"}}
	mustCreate(t, k8s, svc)
	svc.Status.Address = &duckv1.Addressable{URL: "http://" + name + "." + ns + ".svc.cluster.local"}
	if err := k8s.Status().Update(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
}

func mustCreate(t *testing.T, k8s client.Client, obj client.Object) {
	t.Helper()
	if err := k8s.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

func get(t *testing.T, k8s client.Client, ns, name string) *servingv1beta1.DomainMapping {
	t.Helper()
	dm := &servingv1beta1.DomainMapping{}
	if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, dm); err != nil {
		t.Fatal(err)
	}
	return dm
}

func ready(t *testing.T, k8s client.Client, ns, name string) {
	t.Helper()
	eventually(t, ns+"/"+name+" Ready and served", func(ctx context.Context) (bool, string) {
		dm := &servingv1beta1.DomainMapping{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, dm); err != nil {
			return false, err.Error()
		}
		return dm.Status.IsReady() && dm.Served(), fmt.Sprintf("%+v", dm.Status.Conditions)
	})
}

func condition(t *testing.T, k8s client.Client, ns, name string, ct duckv1.ConditionType, want corev1.ConditionStatus, reason string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%s/%s %s=%s (%s)", ns, name, ct, want, reason), func(ctx context.Context) (bool, string) {
		dm := &servingv1beta1.DomainMapping{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, dm); err != nil {
			return false, err.Error()
		}
		c := dm.Status.GetCondition(ct)
		return c != nil && c.Status == want && c.Reason == reason && dm.Status.ObservedGeneration == dm.Generation, fmt.Sprintf("%+v", dm.Status.Conditions)
	})
}
