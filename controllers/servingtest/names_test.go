//go:build !unit

package servingtest

import (
	"context"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A Service whose derived names pass 63 characters is Ready: its
// Revision, Deployment and private Service are named as Knative
// shortens them (kmeta.ChildName), not concatenated into names the API
// server refuses. The 50-character name is one of Knative's conformance
// Services, whose <revision>-private was 64 characters (FailedCreate);
// at 60 characters the Revision's own name is shortened too.
func TestLongNamesAreShortened(t *testing.T) {
	for i, tc := range []struct{ service, revision string }{
		{service: "revision-timeout-does-not-exceed-timeout--egnetwcn", revision: "revision-timeout-does-not-exceed-timeout--egnetwcn-00001"},
		{service: "configuration-with-a-name-long-enough-to-need-a-hash-abcdefg", revision: "configuration-with-a-namea1e223d4efdcde925d120cfcff8aa44a-00001"},
	} {
		t.Run(tc.service, func(t *testing.T) {
			ns := namespace(t)
			ctx := context.Background()
			if err := k8s.Create(ctx, helloService(ns, tc.service, "World")); err != nil {
				t.Fatal(err)
			}
			port := int32(41901 + i)
			runReplicas(t, ns, tc.revision, port)
			eventually(t, "Service Ready", func(ctx context.Context) (bool, string) {
				svc, err := getService(ctx, ns, tc.service)
				if err != nil {
					return false, err.Error()
				}
				return readyCondition(&svc.Status.Status)
			})
			svc, _ := getService(ctx, ns, tc.service)
			if svc.Status.LatestReadyRevisionName != tc.revision {
				t.Errorf("latest ready Revision = %q, want %q", svc.Status.LatestReadyRevisionName, tc.revision)
			}
			// The SKS found the replica's slice of the shortened private
			// Service and mirrored it under the public one.
			list := &discoveryv1.EndpointSliceList{}
			if err := k8s.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: tc.revision}); err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 1 || len(list.Items[0].Ports) != 1 || *list.Items[0].Ports[0].Port != port {
				t.Errorf("public slices of %s: %+v, want one on port %d", tc.revision, list.Items, port)
			}
		})
	}
}
