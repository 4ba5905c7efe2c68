//go:build !unit

package endpoints

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/knitops/knit/internal/poll"
)

// k8s reads and writes the test's objects straight from the API server.
var k8s client.Client

// The aliases the suite's manager keeps: devAlias's source is
// selectorless with a slice written beside it, as knit dev's activator;
// clusterAlias's has a selector, as the chart's activator.
var (
	devAlias     = Alias{Namespace: "knit-system", Source: "knit-activator", Name: "activator-service"}
	clusterAlias = Alias{Namespace: "cluster-system", Source: "knit-activator", Name: "activator-service"}
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

// run starts a kube-apiserver (no kube-controller-manager: no garbage
// collector, no endpoints or endpointslice controller; the tests write
// what those would) and a manager running this package alone.
func run(m *testing.M) int {
	flag.Parse()
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run through `make test`, which builds kube-apiserver and etcd into ./bin")
		return 1
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		// Two aliases register controllers of the same name.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := SetupWithManager(mgr, devAlias, clusterAlias); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return m.Run()
}

// eventually polls cond until it holds or 30 s pass.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	poll.Until(t, what, 50*time.Millisecond, 30*time.Second, cond)
}

// namespace creates a namespace for one test.
func namespace(t *testing.T, name string) string {
	t.Helper()
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// service is a ClusterIP Service with port http, selecting app=name when
// selector is set.
func service(ns, name string, selector bool) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": name}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
	if selector {
		s.Spec.Selector = map[string]string{"app": name}
	}
	return s
}

// endpoint is a slice endpoint at addr, ready or not.
func endpoint(addr string, ready bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}
}

// slice is an EndpointSlice of svc written by manager, port http 8012.
func slice(svc *corev1.Service, name, manager string, t discoveryv1.AddressType, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: name,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: manager}},
		AddressType: t,
		Endpoints:   eps,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8012), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
}

// getEndpoints reads an Endpoints; nil when there is none.
func getEndpoints(ctx context.Context, t *testing.T, ns, name string) *corev1.Endpoints {
	t.Helper()
	ep := &corev1.Endpoints{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ep); err != nil {
		if client.IgnoreNotFound(err) != nil {
			t.Fatalf("get Endpoints %s/%s: %v", ns, name, err)
		}
		return nil
	}
	return ep
}

// settled waits until the controller has mirrored a fresh selectorless
// Service of ns: its work queue has reached what the test did before.
func settled(t *testing.T, ns string) {
	t.Helper()
	name := fmt.Sprintf("sentinel-%d", time.Now().UnixNano())
	svc := service(ns, name, false)
	create(t, svc)
	create(t, slice(svc, name+"-a", "knit-serverlessservice", discoveryv1.AddressTypeIPv4, endpoint("10.9.9.9", true)))
	eventually(t, "the sentinel's Endpoints", func(ctx context.Context) (bool, string) {
		return getEndpoints(ctx, t, ns, name) != nil, "none yet"
	})
}
