package endpointslices

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
)

// revisionSlices is what a namespace of n Revisions holds: two slices of
// each private Service (hello-<i>-private), one of each public one, and
// a slice of no Service.
func revisionSlices(namespace string, n int) []discoveryv1.EndpointSlice {
	slice := func(name, service string) discoveryv1.EndpointSlice {
		s := discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, AddressType: discoveryv1.AddressTypeFQDN}
		if service != "" {
			s.Labels = map[string]string{discoveryv1.LabelServiceName: service}
		}
		return s
	}
	out := []discoveryv1.EndpointSlice{slice("orphan", "")}
	for i := range n {
		rev := fmt.Sprintf("hello-%d", i)
		out = append(out, slice(rev+"-private-a", rev+"-private"), slice(rev+"-private-b", rev+"-private"), slice(rev+"-x", rev))
	}
	return out
}

// A lookup through a manager's cache returns the named Service's slices
// and no other's, among a thousand Revisions in two namespaces.
func TestListAmongMany(t *testing.T) {
	c := newCache(t, append(revisionSlices("a", 1000), revisionSlices("b", 10)...))
	if err := Index(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	start(t, c)
	for _, tc := range []struct {
		service types.NamespacedName
		want    []string // namespace/name, sorted
	}{
		{types.NamespacedName{Namespace: "a", Name: "hello-7-private"}, []string{"a/hello-7-private-a", "a/hello-7-private-b"}},
		{types.NamespacedName{Namespace: "b", Name: "hello-7-private"}, []string{"b/hello-7-private-a", "b/hello-7-private-b"}},
		{types.NamespacedName{Namespace: "a", Name: "hello-7"}, []string{"a/hello-7-x"}},
		{types.NamespacedName{Namespace: "a", Name: "hello-70"}, []string{"a/hello-70-x"}},
		{types.NamespacedName{Namespace: "b", Name: "hello-70-private"}, nil},
		{types.NamespacedName{Namespace: "c", Name: "hello-7-private"}, nil},
	} {
		for _, opts := range [][]client.ListOption{nil, {client.UnsafeDisableDeepCopy}} {
			items, err := List(context.Background(), c, tc.service, opts...)
			if err != nil {
				t.Fatalf("%s: %v", tc.service, err)
			}
			var got []string
			for _, s := range items {
				got = append(got, s.Namespace+"/"+s.Name)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("slices of %s, options %v (-want +got):\n%s", tc.service, opts, diff)
			}
		}
	}
}

// The KPA's lookup, for each of a thousand Revisions in one namespace:
// by label, as before the index, every lookup scans the namespace's 3,000
// slices; by the index it reads the Revision's own.
func BenchmarkList(b *testing.B) {
	c := newCache(b, revisionSlices("default", 1000))
	if err := Index(context.Background(), c); err != nil {
		b.Fatal(err)
	}
	start(b, c)
	ctx := context.Background()
	b.Run("label selector", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			var list discoveryv1.EndpointSliceList
			err := c.List(ctx, &list, client.InNamespace("default"),
				client.MatchingLabels{discoveryv1.LabelServiceName: fmt.Sprintf("hello-%d-private", i%1000)}, client.UnsafeDisableDeepCopy)
			if err != nil || len(list.Items) != 2 {
				b.Fatalf("%d slices, %v", len(list.Items), err)
			}
		}
	})
	b.Run("index", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			items, err := List(ctx, c, types.NamespacedName{Namespace: "default", Name: fmt.Sprintf("hello-%d-private", i%1000)}, client.UnsafeDisableDeepCopy)
			if err != nil || len(items) != 2 {
				b.Fatalf("%d slices, %v", len(items), err)
			}
		}
	})
	b.Run("index, a Revision at zero", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			items, err := List(ctx, c, types.NamespacedName{Namespace: "default", Name: fmt.Sprintf("idle-%d-private", i%1000)}, client.UnsafeDisableDeepCopy)
			if err != nil || len(items) != 0 {
				b.Fatalf("%d slices, %v", len(items), err)
			}
		}
	})
}
