//go:build !unit

package webhooks

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/knitops/knit/api"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

// TestAdmissionThroughAPIServer sends objects through a real kube-apiserver
// with knit's CRDs and webhook registrations installed, proving the
// registrations, the paths and the CRD schema work with the pure logic.
func TestAdmissionThroughAPIServer(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: the admission tests need kube-apiserver and etcd. " +
			"Build them with `make tools` and run `KUBEBUILDER_ASSETS=$PWD/bin go test ./webhooks/...`, " +
			"or `go test -tags unit ./webhooks/...` for the unit tests alone")
	}
	c := startAPIServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t.Run("min-scale above max-scale is refused naming the annotation", func(t *testing.T) {
		svc := service("bad-scale", bareSpec(corev1.Container{Image: image}))
		svc.Spec.Template.Annotations = map[string]string{
			"autoscaling.knative.dev/min-scale": "5", "autoscaling.knative.dev/max-scale": "2",
		}
		err := c.Create(ctx, svc)
		want := "validation failed: invalid value: 5: spec.template.metadata.annotations[autoscaling.knative.dev/min-scale]\nmin-scale=5 is greater than max-scale=2"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("create: err = %v\nwant it to contain %s", err, want)
		}
		if !apierrors.IsBadRequest(err) {
			t.Errorf("create: err = %#v, want BadRequest as Knative's webhook answers", err)
		}
		t.Logf("refused as kubectl shows it: %v", err)
		if err := c.Get(ctx, client.ObjectKeyFromObject(svc), &servingv1.Service{}); !apierrors.IsNotFound(err) {
			t.Errorf("refused Service: Get err = %v, want NotFound", err)
		}
	})

	t.Run("a minimal Service is stored defaulted", func(t *testing.T) {
		svc := service("minimal", bareSpec(corev1.Container{Image: image}))
		if err := c.Create(ctx, svc); err != nil {
			t.Fatalf("create: %v", err)
		}
		got := &servingv1.Service{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(svc), got); err != nil {
			t.Fatal(err)
		}
		want := defaultedSpec()
		want.Containers[0].Ports[0].Protocol = corev1.ProtocolTCP // the CRD schema's default
		if diff := cmp.Diff(want, got.Spec.Template.Spec); diff != "" {
			t.Errorf("stored template spec (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]servingv1.TrafficTarget{latest(100)}, got.Spec.Traffic); diff != "" {
			t.Errorf("stored traffic (-want +got):\n%s", diff)
		}
		if got.Annotations[servingv1.CreatorAnnotation] == "" {
			t.Errorf("annotations = %v, want %s set", got.Annotations, servingv1.CreatorAnnotation)
		}
	})

	t.Run("a Revision's spec cannot change but its labels can", func(t *testing.T) {
		rev := &servingv1.Revision{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "minimal-00001"},
			Spec:       bareSpec(corev1.Container{Image: image}),
		}
		if err := c.Create(ctx, rev); err != nil {
			t.Fatalf("create: %v", err)
		}
		labelled := rev.DeepCopy()
		labelled.Labels = map[string]string{"team": "web"}
		if err := c.Update(ctx, labelled); err != nil {
			t.Errorf("label update: %v", err)
		}
		changed := labelled.DeepCopy()
		changed.Spec.Containers[0].Image = "v2"
		err := c.Update(ctx, changed)
		if want := "a Revision's spec is immutable"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("spec update: err = %v\nwant it to contain %s", err, want)
		}
	})

	t.Run("an edit to config-autoscaler or config-defaults decides the next admission", func(t *testing.T) {
		zero := service("zero-initial", bareSpec(corev1.Container{Image: image}))
		zero.Spec.Template.Annotations = map[string]string{"autoscaling.knative.dev/initial-scale": "0"}
		err := c.Create(ctx, zero.DeepCopy(), client.DryRunAll)
		if want := "invalid value: 0: spec.template.metadata.annotations[autoscaling.knative.dev/initial-scale]"; err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("initial-scale 0 before config-autoscaler allows it: err = %v, want it to contain %s", err, want)
		}
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.SystemNamespace}}); err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string]map[string]string{
			config.AutoscalerConfigName: {"allow-zero-initial-scale": "true"},
			config.DefaultsConfigName:   {"revision-timeout-seconds": "120", "container-concurrency": "7"},
		} {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: name}, Data: data}
			if err := c.Create(ctx, cm); err != nil {
				t.Fatal(err)
			}
		}
		// The store learns of the edits through a watch: poll, as a user
		// retrying kubectl apply would.
		var stored *servingv1.Service
		err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			svc := zero.DeepCopy()
			if err := c.Create(ctx, svc, client.DryRunAll); err != nil {
				t.Logf("not yet: %v", err)
				return false, nil
			}
			stored = svc
			return ptr.Deref(svc.Spec.Template.Spec.TimeoutSeconds, 0) == 120, nil
		})
		if err != nil {
			t.Fatalf("initial-scale 0 still refused, or config-defaults not applied, after the ConfigMaps changed: %v", err)
		}
		if got := ptr.Deref(stored.Spec.Template.Spec.ContainerConcurrency, -1); got != 7 {
			t.Errorf("defaulted containerConcurrency = %d, want 7 from config-defaults", got)
		}
	})

	t.Run("template annotations beyond Kubernetes' limit are refused naming the field", func(t *testing.T) {
		big := service("big-annotation", bareSpec(corev1.Container{Image: image}))
		big.Spec.Template.Annotations = map[string]string{"example.com/blob": strings.Repeat("x", 300<<10)}
		err := c.Create(ctx, big)
		if want := "may not be more than 262144 bytes in all"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("create: err = %v\nwant it to contain %s", err, want)
		}
	})

	t.Run("an EventSink that is not http(s) is refused by its CRD", func(t *testing.T) {
		for _, uri := range []string{"file:///etc/passwd", "gopher://127.0.0.1:2379/", "ftp://example.com/"} {
			es := &knitv1alpha1.EventSink{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "sink"}, Spec: knitv1alpha1.EventSinkSpec{URI: uri}}
			err := c.Create(ctx, es)
			if want := "must be an http:// or https:// URL: knit POSTs CloudEvents to it"; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("create with %s: err = %v\nwant it to contain %s", uri, err, want)
			}
		}
		ok := &knitv1alpha1.EventSink{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "sink"}, Spec: knitv1alpha1.EventSinkSpec{URI: "HTTPS://hooks.example.com/knit"}}
		if err := c.Create(ctx, ok, client.DryRunAll); err != nil {
			t.Errorf("an https sink: %v", err)
		}
	})

	t.Run("a Route whose percents do not add up is refused", func(t *testing.T) {
		rt := &servingv1.Route{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "split"},
			Spec: servingv1.RouteSpec{Traffic: []servingv1.TrafficTarget{
				{ConfigurationName: "minimal", Percent: ptr.To[int64](50)},
				{RevisionName: "minimal-00001", Percent: ptr.To[int64](40)},
			}},
		}
		err := c.Create(ctx, rt)
		if want := "invalid value: 90: spec.traffic\ntraffic targets' percents add up to 90"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("create: err = %v\nwant it to contain %s", err, want)
		}
	})
	t.Run("a pod Kubernetes refuses is refused at the Service when asked to dry-run", func(t *testing.T) {
		// The namespace caps a container at 1 CPU; knit's own checks
		// know nothing of LimitRanges, the API server's admission does.
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "capped"}}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "capped", Name: "default"}}
		lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: "capped", Name: "cpu"},
			Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
				Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}
		for _, o := range []client.Object{ns, sa, lr} {
			if err := c.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		greedy := service("greedy", bareSpec(corev1.Container{Image: image, Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}))
		greedy.Namespace = "capped"
		// Knative's default (Allowed): no dry run unless the Service asks.
		if err := c.Create(ctx, greedy.DeepCopy(), client.DryRunAll); err != nil {
			t.Fatalf("without the annotation: %v", err)
		}
		greedy.Annotations = map[string]string{config.DryRunAnnotation: "enabled"}
		err := c.Create(ctx, greedy)
		want := "validation failed: dry run failed with pods \"dry-run-validation-"
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "maximum cpu usage per Container is 1, but limit is 2") {
			t.Fatalf("create: err = %v\nwant the API server's refusal, starting %s", err, want)
		}
		t.Logf("refused as kubectl shows it: %v", err)
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace("capped")); err != nil || len(pods.Items) > 0 {
			t.Errorf("the dry run left pods: %v (err %v)", pods.Items, err)
		}
	})
}

// startAPIServer starts kube-apiserver and etcd with knit's CRDs and the
// registrations from Configurations, serves Setup's webhooks where envtest
// points them, and returns a client once the webhook server answers.
func startAPIServer(t *testing.T) client.Client {
	t.Helper()
	mutating, validating := Configurations(func(path string) admissionregistrationv1.WebhookClientConfig {
		// envtest turns a service reference into a URL to its local server.
		return admissionregistrationv1.WebhookClientConfig{
			Service: &admissionregistrationv1.ServiceReference{Namespace: "knit-system", Name: "knit-webhooks", Path: &path},
		}
	})
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{"../charts/knit/crds"},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			MutatingWebhooks:   []*admissionregistrationv1.MutatingWebhookConfiguration{mutating},
			ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{validating},
		},
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
	hooks := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: hooks.LocalServingHost, Port: hooks.LocalServingPort, CertDir: hooks.LocalServingCertDir,
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	// Admission reads the store the controllers read, fed by the same
	// watcher, as platform.SetupControlPlane wires it.
	store, err := config.NewStore("localhost")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if err := Setup(mgr, FromStore(store)); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("manager: %v", err)
		}
	})
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return mgr.GetWebhookServer().StartedChecker()(nil) == nil, nil
	})
	if err != nil {
		t.Fatalf("webhook server did not start: %v", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := waitForAdmission(ctx, c); err != nil {
		t.Fatalf("the API server does not call the webhooks: %v", err)
	}
	return c
}

// waitForAdmission polls with dry-run creates until the API server both
// defaults and validates through the webhooks: it learns of new webhook
// registrations from an informer, a moment after they are created.
func waitForAdmission(ctx context.Context, c client.Client) error {
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		svc := service("probe", bareSpec(corev1.Container{Image: image}))
		if err := c.Create(ctx, svc, client.DryRunAll); err != nil || svc.Spec.Template.Spec.TimeoutSeconds == nil {
			return false, nil
		}
		bad := &servingv1.Route{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "probe"},
			Spec:       servingv1.RouteSpec{Traffic: []servingv1.TrafficTarget{{ConfigurationName: "probe", Percent: ptr.To[int64](1)}}},
		}
		err := c.Create(ctx, bad, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "denied the request"), nil
	})
}
