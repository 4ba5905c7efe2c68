package runtime

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestForgetEarlierEndpointsDeletesEveryRuntimeSliceAndNamesTheirServices(t *testing.T) {
	slice := func(ns, name, service, managedBy string) client.Object {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
			discoveryv1.LabelServiceName: service, discoveryv1.LabelManagedBy: managedBy,
		}}, AddressType: EndpointAddressType}
	}
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(
		slice("b", "hello-00001-private-abcde", "hello-00001-private", ManagedBy),
		slice("b", "hello-00001-private-fghij", "hello-00001-private", ManagedBy),
		slice("a", "web-00002-private-klmno", "web-00002-private", ManagedBy),
		slice("a", "web-00002-0123abcd", "web-00002", "knit-serverlessservice"),
	).Build()

	services, err := ForgetEarlierEndpoints(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	want := []types.NamespacedName{{Namespace: "a", Name: "web-00002-private"}, {Namespace: "b", Name: "hello-00001-private"}}
	if diff := cmp.Diff(want, services); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}
	var left discoveryv1.EndpointSliceList
	if err := c.List(context.Background(), &left); err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 1 || left.Items[0].Name != "web-00002-0123abcd" {
		t.Errorf("slices left: %v, want only the one another controller manages", left.Items)
	}
}
