package endpointslicestest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/internal/endpointslices"
)

// A fake client with the index answers endpointslices.List as a cache
// does: the named Service's slices among many, in its namespace only.
func TestWithIndex(t *testing.T) {
	b := WithIndex(fake.NewClientBuilder())
	for _, ns := range []string{"a", "b"} {
		for i := range 100 {
			service := fmt.Sprintf("hello-%d-private", i)
			for _, suffix := range []string{"x", "y"} {
				b = b.WithObjects(&discoveryv1.EndpointSlice{
					ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: service + "-" + suffix, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
					AddressType: discoveryv1.AddressTypeFQDN,
				})
			}
		}
	}
	c := b.Build()
	for _, tc := range []struct {
		service types.NamespacedName
		want    []string
	}{
		{types.NamespacedName{Namespace: "a", Name: "hello-1-private"}, []string{"a/hello-1-private-x", "a/hello-1-private-y"}},
		{types.NamespacedName{Namespace: "b", Name: "hello-10-private"}, []string{"b/hello-10-private-x", "b/hello-10-private-y"}},
		{types.NamespacedName{Namespace: "a", Name: "hello-100-private"}, nil},
	} {
		items, err := endpointslices.List(context.Background(), c, tc.service, client.UnsafeDisableDeepCopy)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range items {
			got = append(got, s.Namespace+"/"+s.Name)
		}
		slices.Sort(got)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("slices of %s (-want +got):\n%s", tc.service, diff)
		}
	}
}
