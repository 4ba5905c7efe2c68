//go:build !unit

package activator

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/knitops/knit/api"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/names"
)

// startManager starts an API server (envtest, with knit's CRDs) and a
// manager on it with the activator set up; it returns a client and the
// activator's URL.
func startManager(t *testing.T, opts Options) (client.Client, *Activator, string) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is unset: run `make test`, or `make tools` then " +
			"`KUBEBUILDER_ASSETS=$PWD/bin go test ./dataplane/activator/`; make test-unit leaves envtest tests out")
	}
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "charts", "knit", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop envtest: %v", err)
		}
	})
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	srv := h2cServer(t, a)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return mgr.GetClient(), a, srv.URL
}

// Requests for a Revision known only to the API server flow once its
// private EndpointSlice has a ready endpoint; the activator's place
// among the activators follows the activator Service's slices.
func TestSetupWithManager(t *testing.T) {
	rep := newFakeReporter()
	k8s, a, url := startManager(t, Options{Reporter: rep, StatsInterval: time.Hour, Self: "10.0.0.2"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	key := types.NamespacedName{Namespace: "activator-test", Name: "hello-00001"}
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: key.Namespace}}); err != nil {
		t.Fatal(err)
	}
	revision := &servingv1.Revision{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec: servingv1.RevisionSpec{
			PodSpec:              servingv1.PodSpec{Containers: []corev1.Container{{Name: "user-container", Image: "example.com/hello"}}},
			ContainerConcurrency: ptr.To[int64](1),
			TimeoutSeconds:       ptr.To[int64](30),
		},
	}
	if err := k8s.Create(ctx, revision); err != nil {
		t.Fatal(err)
	}
	// Not ready yet: the activator probes a not-ready endpoint too, and a
	// queue-proxy that answered would take the request before it waits.
	q := newFakeQueue(t, false, reply("hello from the replica"))
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace, Name: names.PrivateService(key.Name) + "-abcde",
			// The private Service's labels, as the endpointslice controller copies them.
			Labels: map[string]string{discoveryv1.LabelServiceName: names.PrivateService(key.Name),
				networkingv1alpha1.ServerlessServiceLabelKey: key.Name, networkingv1alpha1.ServiceTypeLabelKey: networkingv1alpha1.ServiceTypePrivate,
				discoveryv1.LabelManagedBy: "knit-local-runtime"},
		},
		// The API server refuses loopback IPs; knit dev publishes them as FQDNs.
		AddressType: discoveryv1.AddressTypeFQDN,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{"127.0.0.1"},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)},
		}},
		Ports: []discoveryv1.EndpointPort{
			{Name: ptr.To("http"), Port: ptr.To(int32(q.srv.Listener.Addr().(*net.TCPAddr).Port)), Protocol: ptr.To(corev1.ProtocolTCP)},
			{Name: ptr.To("http-autometric"), Port: ptr.To(int32(1)), Protocol: ptr.To(corev1.ProtocolTCP)},
		},
	}
	if err := k8s.Create(ctx, slice); err != nil {
		t.Fatal(err)
	}

	eventually(t, "the activator to know the revision", func() bool { return a.get(key) != nil })
	pending := sendAsync(ctx, newClient(t), url, key)
	if got := receive(t, rep.pokes, "a poke"); got != key {
		t.Fatalf("poked %s, want %s", got, key)
	}

	q.ready.Store(true)
	slice.Endpoints[0].Conditions.Ready = ptr.To(true)
	if err := k8s.Update(ctx, slice); err != nil {
		t.Fatal(err)
	}
	if res := receive(t, pending, "the response"); res.status != http.StatusOK || res.body != "hello from the replica" {
		t.Fatalf("got %v, want 200 from the replica", res)
	}
	// The slice's update may still be being reconciled: read under the
	// throttler's lock.
	thr := a.get(key).thr
	thr.mu.Lock()
	cc, wait := thr.cc, thr.wait
	thr.mu.Unlock()
	if cc != 1 || wait != 30*time.Second {
		t.Errorf("throttler cc %d, wait %v; want the revision's 1 and 30s", cc, wait)
	}

	// A request that beats the reconciler reads the Revision from the cache.
	a.Forget(key)
	if res := send(ctx, newClient(t), http.MethodGet, url, key, ""); res.status != http.StatusOK {
		t.Fatalf("after Forget: %v, want the revision read from the cache and served", res)
	}
	if res := send(ctx, newClient(t), http.MethodGet, url, types.NamespacedName{Namespace: key.Namespace, Name: "nope"}, ""); res.status != http.StatusBadGateway {
		t.Fatalf("unknown revision: %v, want 502", res)
	}

	// Two ready activators, this one second: the Revision's throttler
	// follows; one gone, it is alone again.
	placed := func(want peers) func() bool {
		return func() bool {
			thr := a.get(key).thr
			thr.mu.Lock()
			defer thr.mu.Unlock()
			return thr.peers == want
		}
	}
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: activatorService.Namespace}}); err != nil {
		t.Fatal(err)
	}
	peerSlice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: activatorService.Namespace, Name: activatorService.Name + "-abcde",
			Labels: map[string]string{discoveryv1.LabelServiceName: activatorService.Name},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.0.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
			{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
		},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(8012)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if err := k8s.Create(ctx, peerSlice); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the activator to place itself second of two", placed(peers{index: 1, count: 2}))
	peerSlice.Endpoints[1].Conditions.Ready = ptr.To(false)
	if err := k8s.Update(ctx, peerSlice); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the activator to be alone", placed(peers{index: 0, count: 1}))

	if err := k8s.Delete(ctx, revision); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the activator to forget the deleted revision", func() bool { return a.get(key) == nil })
}
