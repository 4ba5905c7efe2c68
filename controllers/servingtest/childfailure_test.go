//go:build !unit

package servingtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// When the API server cannot create a Revision's Services — here its
// service range is full, as knit dev's /24 was after about 126 Revisions —
// the failure shows all the way up, with the API server's words: the SKS,
// the Revision and the Service turn Ready=False instead of staying Ready
// while no request can reach the replicas. Once addresses free up, the
// retries create the Services and everything turns Ready.
func TestServiceThatCannotBeCreatedShowsOnParents(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run through `make test`, which builds kube-apiserver and etcd into ./bin")
	}
	// An API server of its own, with 14 service addresses (a /28).
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "..", "charts", "knit", "crds")}, ErrorIfCRDPathMissing: true}
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.0.0.0/28")
	small, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, err := startManager(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "full"}}); err != nil {
		t.Fatal(err)
	}
	fillers := fillServiceRange(t, c, "full")
	t.Logf("the service range is full after %d Services", len(fillers))

	if err := c.Create(ctx, helloService("full", "hello", "World")); err != nil {
		t.Fatal(err)
	}
	runReplicasOn(t, c, "full", "hello-00001", 41701)
	const reason, apiSays = "FailedCreate", `cannot create Service "hello-00001`
	failedWith := func(what string, s *duckv1.Status, want string) (bool, string) {
		r := s.GetCondition(duckv1.ConditionReady)
		if r == nil {
			return false, what + ": no Ready condition"
		}
		return r.IsFalse() && strings.Contains(r.Message, want) && strings.Contains(r.Message, "range"),
			fmt.Sprintf("%s Ready=%s reason=%s message=%q", what, r.Status, r.Reason, r.Message)
	}
	eventually(t, "SKS, Revision and Service Ready=False with the API server's error", func(ctx context.Context) (bool, string) {
		sks := &networkingv1alpha1.ServerlessService{}
		rev := &servingv1.Revision{}
		svc := &servingv1.Service{}
		for name, obj := range map[string]client.Object{"hello-00001": sks, "hello-00001 ": rev, "hello": svc} {
			if err := c.Get(ctx, client.ObjectKey{Namespace: "full", Name: strings.TrimSpace(name)}, obj); err != nil {
				return false, err.Error()
			}
		}
		if ok, why := failedWith("SKS", &sks.Status.Status, apiSays); !ok {
			return false, why
		}
		if r := sks.Status.GetCondition(duckv1.ConditionReady); r.Reason != reason {
			return false, "SKS reason " + r.Reason
		}
		if ok, why := failedWith("Revision", &rev.Status.Status, apiSays); !ok {
			return false, why
		}
		return failedWith("Service", &svc.Status.Status, `Revision "hello-00001" failed with message: `+apiSays)
	})

	for _, f := range fillers {
		if err := c.Delete(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "Service Ready once the range has room", func(ctx context.Context) (bool, string) {
		svc := &servingv1.Service{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "full", Name: "hello"}, svc); err != nil {
			return false, err.Error()
		}
		return readyCondition(&svc.Status.Status)
	})
}

// fillServiceRange creates ClusterIP Services in ns until the API server
// has no address left, and returns them.
func fillServiceRange(t *testing.T, c client.Client, ns string) []*corev1.Service {
	t.Helper()
	var made []*corev1.Service
	for i := 0; ; i++ {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("filler-%d", i)},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
		}
		err := c.Create(context.Background(), svc)
		switch {
		case err == nil:
			made = append(made, svc)
		case i > 0:
			t.Logf("Service %d refused: %v", i, err)
			return made
		default:
			t.Fatalf("first Service refused: %v", err)
		}
		if i > 64 {
			t.Fatal("the service range never filled")
		}
	}
}
