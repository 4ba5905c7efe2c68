package endpointslices_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/internal/endpointslices"
)

// Uncached answers the indexed lookup through a client that has no index
// (here a fake one, which like the API server refuses the unknown field)
// by the label, keeping the lookup's other selectors, and leaves every
// other List alone.
func TestUncached(t *testing.T) {
	slice := func(ns, name, service, managedBy string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
				discoveryv1.LabelServiceName: service, discoveryv1.LabelManagedBy: managedBy}},
			AddressType: discoveryv1.AddressTypeFQDN,
		}
	}
	direct := fake.NewClientBuilder().WithObjects(
		slice("default", "hello-a", "hello", "knit-local-runtime"),
		slice("default", "hello-b", "hello", "knit-serverlessservice"),
		slice("default", "other-a", "other", "knit-local-runtime"),
		slice("elsewhere", "hello-a", "hello", "knit-local-runtime"),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "config"}},
	).Build()
	hello := types.NamespacedName{Namespace: "default", Name: "hello"}
	if _, err := endpointslices.List(context.Background(), direct, hello); err == nil {
		t.Fatal("a client without the index answered the indexed lookup; the test proves nothing")
	}
	c := endpointslices.Uncached(direct)
	for _, tc := range []struct {
		name string
		opts []client.ListOption
		want []string
	}{
		{"the Service's slices", nil, []string{"hello-a", "hello-b"}},
		{"no copy asked for", []client.ListOption{client.UnsafeDisableDeepCopy}, []string{"hello-a", "hello-b"}},
		{"and a label", []client.ListOption{client.MatchingLabels{discoveryv1.LabelManagedBy: "knit-local-runtime"}}, []string{"hello-a"}},
	} {
		items, err := endpointslices.List(context.Background(), c, hello, tc.opts...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []string
		for _, s := range items {
			got = append(got, s.Name)
		}
		slices.Sort(got)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	var maps corev1.ConfigMapList
	if err := c.List(context.Background(), &maps, client.InNamespace("default")); err != nil || len(maps.Items) != 1 {
		t.Errorf("another kind's list: %d items, %v; want the one ConfigMap", len(maps.Items), err)
	}
}
