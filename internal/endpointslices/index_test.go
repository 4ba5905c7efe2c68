package endpointslices

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestServiceName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   []string
	}{
		{"a Service's slice", map[string]string{discoveryv1.LabelServiceName: "hello-00001-private"}, []string{"hello-00001-private"}},
		{"with other labels", map[string]string{discoveryv1.LabelServiceName: "hello", discoveryv1.LabelManagedBy: "knit-local-runtime"}, []string{"hello"}},
		{"no labels", nil, nil},
		{"no service-name label", map[string]string{discoveryv1.LabelManagedBy: "someone"}, nil},
		{"an empty service name", map[string]string{discoveryv1.LabelServiceName: ""}, nil},
	} {
		s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "s", Labels: tc.labels}}
		if diff := cmp.Diff(tc.want, ServiceName(s)); diff != "" {
			t.Errorf("%s: keys (-want +got):\n%s", tc.name, diff)
		}
	}
}

// Components sharing a manager each register the index; only the first
// registers it, where controller-runtime would refuse the second.
func TestIndexOncePerCache(t *testing.T) {
	ctx := context.Background()
	c := newCache(t, nil)
	for i := range 3 {
		if err := Index(ctx, c); err != nil {
			t.Fatalf("registration %d: %v", i+1, err)
		}
	}
	// What Index spares its callers: the index is there, under the name it
	// looks for, and a second registration of it fails.
	err := c.IndexField(ctx, &discoveryv1.EndpointSlice{}, Field, ServiceName)
	if err == nil || !strings.Contains(err.Error(), "conflict") {
		t.Errorf("registering the field again by hand: %v, want an indexer conflict", err)
	}
	// A new manager (knit dev's controllers after a restart) has a new
	// cache, which needs the index of its own.
	if err := Index(ctx, newCache(t, nil)); err != nil {
		t.Errorf("another cache: %v", err)
	}
}
