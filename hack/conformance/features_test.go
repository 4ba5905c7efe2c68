package main

import (
	"context"
	"errors"
	"maps"
	"regexp"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"
)

var pvcFlags = []string{
	"kubernetes.podspec-persistent-volume-claim",
	"kubernetes.podspec-persistent-volume-write",
	"kubernetes.podspec-securitycontext",
}

// Each feature package runs with the flags Knative's CI gives it.
func TestFeaturePackagesAsKnativeCI(t *testing.T) {
	want := map[string][]string{
		"e2e/initcontainers":        {"kubernetes.podspec-init-containers"},
		"e2e/multicontainerprobing": {"multi-container-probing"},
		"e2e/pvc":                   pvcFlags,
		"e2e/securedefaults":        {"secure-pod-defaults"},
		"e2e/tagheader":             {"tag-header-based-routing"},
		"e2e":                       nil,
	}
	for _, p := range featurePackages {
		if !equal(p.flags, want[p.name]) {
			t.Errorf("%s: flags %v, want %v", p.name, p.flags, want[p.name])
		}
		// Only the ingress reads tag-header-based-routing: admission
		// shows nothing of it.
		probed := p.name != "e2e/tagheader" && p.name != "e2e"
		if p.alpha != (p.name == "e2e/securedefaults") || p.claim != (p.name == "e2e/pvc") || (p.probe != nil) != probed {
			t.Errorf("%s: alpha %v, claim %v, probe %v", p.name, p.alpha, p.claim, p.probe != nil)
		}
	}
	if len(featurePackages) != len(want) {
		t.Errorf("%d feature packages, want %d", len(featurePackages), len(want))
	}
}

// test/e2e runs the tests knit dev passes, matched whole: TestWebSocket
// must not bring in TestWebSocketViaActivator, which waits for addresses
// knit dev's Endpoints never list, nor TestGRPCUnaryPing its activator
// sibling.
func TestE2ESelection(t *testing.T) {
	var tests string
	for _, p := range featurePackages {
		if p.name == "e2e" {
			tests = p.tests
		}
	}
	re, err := regexp.Compile(tests)
	if err != nil {
		t.Fatalf("e2e tests %q: %v", tests, err)
	}
	for _, name := range []string{
		"TestServiceToServiceCall", "TestGradualRollout", "TestRollbackBYOName",
		"TestWebSocket", "TestWebSocketBlueGreenRoute", "TestWebSocketWithTimeout",
		"TestGRPCUnaryPing", "TestGRPCStreamingPing", "TestHelloWorld", "TestHelloHTTP2WithPortNameH2C",
		"TestRevisionTimeout", "TestInitScalePositive", "TestQueueSideCarResourceLimit", "TestEmptyDir",
		"TestMultiContainer", "TestReadinessAlternatePort", "TestReadinessPathAndQuery", "TestReadinessGRPCProbe",
		"TestImagePullError", "TestRoutesNotReady", "TestRouteVisibilityChanges", "TestSubrouteLocalSTS",
	} {
		if !re.MatchString(name) {
			t.Errorf("%s is not run", name)
		}
	}
	for _, name := range []string{
		"TestWebSocketViaActivator", "TestGRPCUnaryPingViaActivator", "TestGRPCStreamingPingViaActivator",
		"TestSvcToSvcViaActivator", "TestMinScale", "TestCallToPublicService", "TestGRPCAutoscaleUpDownUp",
		"TestAutoscaleUpDownUp", "TestHelloHTTP2WithEmptyPortName", "TestServiceValidationWithInvalidPodSpec",
	} {
		if re.MatchString(name) {
			t.Errorf("%s is run", name)
		}
	}
}

func TestWithFlagsKeepsOtherKeys(t *testing.T) {
	prev := map[string]string{"multi-container": "Enabled", "secure-pod-defaults": "Disabled"}
	got := withFlags(prev, []string{"secure-pod-defaults", "multi-container-probing"})
	want := map[string]string{"multi-container": "Enabled", "secure-pod-defaults": "Enabled", "multi-container-probing": "Enabled"}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if prev["secure-pod-defaults"] != "Disabled" {
		t.Error("withFlags changed its argument")
	}
}

func TestWantState(t *testing.T) {
	for _, c := range []struct {
		data map[string]string
		want flagState
	}{
		{nil, stateOff},
		{map[string]string{"multi-container": "Enabled"}, stateOff},
		{map[string]string{pvcFlags[0]: "Disabled"}, stateOff},
		{withFlags(nil, pvcFlags), stateOn},
		{map[string]string{pvcFlags[0]: "Enabled", pvcFlags[1]: "Enabled"}, stateUnknown},
		{map[string]string{pvcFlags[0]: "Allowed", pvcFlags[1]: "Allowed", pvcFlags[2]: "Allowed"}, stateUnknown},
	} {
		if got := wantState(c.data, pvcFlags); got != c.want {
			t.Errorf("%v: got %v, want %v", c.data, got, c.want)
		}
	}
}

func TestProbeReads(t *testing.T) {
	refused := errors.New(`admission webhook denied the request: spec.template.spec.volumes[0]: Forbidden: ` +
		`Persistent volume write support is disabled (config-features kubernetes.podspec-persistent-volume-write)`)
	for name, c := range map[string]struct {
		got  flagState
		want flagState
	}{
		"accepted":         {acceptedWhenOn(&servingv1.Service{}, nil, pvcFlags), stateOn},
		"refused for flag": {acceptedWhenOn(nil, refused, pvcFlags), stateOff},
		"refused else":     {acceptedWhenOn(nil, errors.New("connection refused"), pvcFlags), stateUnknown},
		"defaulted":        {defaultedWhenOn(admittedWith(&corev1.SecurityContext{AllowPrivilegeEscalation: ptr(false)}), nil, nil), stateOn},
		"not defaulted":    {defaultedWhenOn(admittedWith(nil), nil, nil), stateOff},
		"defaults refused": {defaultedWhenOn(nil, refused, nil), stateUnknown},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", name, c.got, c.want)
		}
	}
}

// Each probe's Service uses what its flags gate.
func TestProbeSpecs(t *testing.T) {
	for _, p := range featurePackages {
		if p.probe == nil {
			continue
		}
		s := probeService("reg/helloworld:v1")
		p.probe.spec(s)
		ps := s.Spec.Template.Spec.PodSpec
		switch p.name {
		case "e2e/initcontainers":
			if len(ps.InitContainers) != 1 {
				t.Errorf("%s: %+v", p.name, ps)
			}
		case "e2e/multicontainerprobing":
			if len(ps.Containers) != 2 || ps.Containers[1].ReadinessProbe == nil || len(ps.Containers[0].Ports) != 1 {
				t.Errorf("%s: %+v", p.name, ps)
			}
		case "e2e/pvc":
			if len(ps.Volumes) != 1 || ps.Volumes[0].PersistentVolumeClaim == nil || ps.Volumes[0].PersistentVolumeClaim.ReadOnly ||
				ps.SecurityContext == nil || ps.SecurityContext.FSGroup == nil {
				t.Errorf("%s: %+v", p.name, ps)
			}
		case "e2e/securedefaults":
			if ps.Containers[0].SecurityContext != nil {
				t.Errorf("%s: %+v", p.name, ps)
			}
		}
	}
}

// switchOn keeps the ConfigMap's other keys and restore puts its data back.
func TestSwitchOnAndRestore(t *testing.T) {
	ctx := context.Background()
	prev := map[string]string{"multi-container": "Enabled", pvcFlags[0]: "Disabled"}
	kube := fake.NewSimpleClientset(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: featuresConfigMap, Namespace: systemNamespace},
		Data:       maps.Clone(prev),
	})
	on, restore, err := switchOn(ctx, kube, pvcFlags)
	must(t, err)
	if want := withFlags(prev, pvcFlags); !maps.Equal(on, want) || !maps.Equal(features(t, kube), want) {
		t.Errorf("switched on: returned %v, stored %v, want %v", on, features(t, kube), want)
	}
	back, err := restore(ctx)
	must(t, err)
	if !maps.Equal(back, prev) || !maps.Equal(features(t, kube), prev) {
		t.Errorf("restored: returned %v, stored %v, want %v", back, features(t, kube), prev)
	}
}

// Without config-features, switchOn makes it and restore deletes it.
func TestSwitchOnWithoutConfigMap(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewSimpleClientset([]runtime.Object{}...)
	_, restore, err := switchOn(ctx, kube, []string{"secure-pod-defaults"})
	must(t, err)
	if got := features(t, kube); got["secure-pod-defaults"] != "Enabled" || len(got) != 1 {
		t.Errorf("made %v", got)
	}
	back, err := restore(ctx)
	must(t, err)
	if back != nil {
		t.Errorf("restore returned %v", back)
	}
	if _, err := kube.CoreV1().ConfigMaps(systemNamespace).Get(ctx, featuresConfigMap, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("config-features left behind: %v", err)
	}
}

func features(t *testing.T, kube *fake.Clientset) map[string]string {
	t.Helper()
	cm, err := kube.CoreV1().ConfigMaps(systemNamespace).Get(context.Background(), featuresConfigMap, metav1.GetOptions{})
	must(t, err)
	return cm.Data
}

func admittedWith(sc *corev1.SecurityContext) *servingv1.Service {
	s := probeService("x")
	s.Spec.Template.Spec.Containers[0].SecurityContext = sc
	return s
}

func ptr[T any](v T) *T { return &v }

func equal(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || maps.Equal(set(a), set(b)))
}

func set(s []string) map[string]bool {
	m := map[string]bool{}
	for _, v := range s {
		m[v] = true
	}
	return m
}
