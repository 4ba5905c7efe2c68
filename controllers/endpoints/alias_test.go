//go:build !unit

package endpoints

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/internal/endpointslices"
)

// aliasSlices are the slices of ns/name written by this package.
func aliasSlices(ctx context.Context, t *testing.T, ns, name string) []discoveryv1.EndpointSlice {
	t.Helper()
	list, err := endpointslices.List(ctx, endpointslices.Uncached(k8s), client.ObjectKey{Namespace: ns, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	var out []discoveryv1.EndpointSlice
	for _, s := range list {
		if s.Labels[discoveryv1.LabelManagedBy] == "knit-endpoints" {
			out = append(out, s)
		}
	}
	return out
}

// knit dev's activator: a selectorless knit-activator whose slice knit
// dev writes (FQDN 127.0.0.1, its loopback port). activator-service
// appears beside it with a copy of that slice, and follows it.
func TestActivatorServiceAlias(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, devAlias.Namespace)
	src := service(ns, devAlias.Source, false)
	create(t, src)
	srcSlice := slice(src, "knit-activator-local", "knit-dev", discoveryv1.AddressTypeFQDN, endpoint("127.0.0.1", true))
	create(t, srcSlice)

	alias := &corev1.Service{}
	eventually(t, "activator-service", func(ctx context.Context) (bool, string) {
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: devAlias.Name}, alias); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	if alias.Spec.Selector != nil || len(alias.Spec.Ports) != 1 || alias.Spec.Ports[0].Name != "http" || alias.Spec.Ports[0].Port != 80 {
		t.Errorf("activator-service spec %+v: want knit-activator's port, no selector", alias.Spec)
	}
	wantOwner := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: src.Name, UID: src.UID, Controller: ptr.To(true)}}
	if diff := cmp.Diff(wantOwner, alias.OwnerReferences); diff != "" {
		t.Errorf("activator-service owner (-want +got):\n%s", diff)
	}

	port := func(s discoveryv1.EndpointSlice) int32 { return ptr.Deref(s.Ports[0].Port, 0) }
	waitAlias := func(want int32) {
		t.Helper()
		eventually(t, "activator-service's slice", func(ctx context.Context) (bool, string) {
			got := aliasSlices(ctx, t, ns, devAlias.Name)
			if len(got) != 1 || port(got[0]) != want || got[0].Endpoints[0].Addresses[0] != "127.0.0.1" {
				return false, cmp.Diff(srcSlice.Endpoints, got)
			}
			return true, ""
		})
	}
	waitAlias(8012)

	// knit dev restarts on another port.
	srcSlice.Ports[0].Port = ptr.To[int32](8099)
	if err := k8s.Update(ctx, srcSlice); err != nil {
		t.Fatal(err)
	}
	waitAlias(8099)

	// Its Endpoints exist, owned by it, but cannot hold 127.0.0.1.
	eventually(t, "activator-service's Endpoints", func(ctx context.Context) (bool, string) {
		ep := getEndpoints(ctx, t, ns, devAlias.Name)
		if ep == nil {
			return false, "none"
		}
		return ep.Annotations["knit.dev/omitted-endpoints"] == "1" && len(ep.Subsets) == 0, cmp.Diff(nil, ep)
	})
}

// On a cluster knit-activator has a selector and the chart installs
// activator-service with the same one: the alias leaves it to them.
func TestAliasLeavesSelectedSource(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, clusterAlias.Namespace)
	create(t, service(ns, clusterAlias.Source, true))
	settled(t, ns)
	// The alias's own queue has no sentinel: watch it a while.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterAlias.Name}, &corev1.Service{})
		if client.IgnoreNotFound(err) != nil || err == nil {
			t.Fatalf("activator-service beside a knit-activator with a selector: %v, want none made", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
