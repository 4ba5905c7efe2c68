package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"
	servingclient "knative.dev/serving/pkg/client/clientset/versioned"
)

// featurePackages are the e2e packages of Knative's CI that switch
// config-features flags on for their run (test/e2e-tests.sh), each with
// the flags and suite flags the CI gives it.
var featurePackages = []testPackage{
	{
		name:  "e2e/initcontainers",
		flags: []string{"kubernetes.podspec-init-containers"},
		probe: &probe{spec: withInitContainer, read: acceptedWhenOn},
	},
	{
		name:  "e2e/multicontainerprobing",
		flags: []string{"multi-container-probing"},
		probe: &probe{spec: withProbedSidecar, read: acceptedWhenOn},
	},
	{
		name: "e2e/pvc",
		flags: []string{
			"kubernetes.podspec-persistent-volume-claim",
			"kubernetes.podspec-persistent-volume-write",
			"kubernetes.podspec-securitycontext",
		},
		claim: true,
		probe: &probe{spec: withWritableClaim, read: acceptedWhenOn},
	},
	{
		name:  "e2e/securedefaults",
		flags: []string{"secure-pod-defaults"},
		alpha: true,
		probe: &probe{spec: func(*servingv1.Service) {}, read: defaultedWhenOn},
	},
	{
		// Admission does not read this flag: the ingress does, by a watch
		// of config-features that takes well under a second, and the
		// test's first tagged request follows two Revisions made Ready.
		// So it settles for settleShort, not Knative CI's 30 s.
		name:   "e2e/tagheader",
		flags:  []string{"tag-header-based-routing"},
		settle: settleShort,
	},
	{
		// test/e2e's tests of what a Knative user relies on that no
		// flag gates: service-to-service calls by in-cluster names, a
		// gradual rollout (rollout-duration 60s, ~1 minute), a rollback
		// to a Revision named by the user, WebSockets (with a blue/green
		// split and each request timeout), gRPC unary and streaming,
		// HTTP/2 by the h2c port name, request timeouts, initial scale,
		// the queue-proxy's resources, emptyDir, several containers,
		// readiness probes (another port, a path with a query, gRPC), an
		// image that cannot be pulled, Routes that cannot be ready,
		// visibility changes and cluster-local subroutes.
		// Left out: the tests that wait for addresses in core/v1
		// Endpoints (the ...ViaActivator tests, TestMinScale), which knit
		// dev keeps empty since every address there is loopback or
		// link-local and the API server refuses those in Endpoints; those
		// whose in-cluster proxy calls the ingress's public address
		// (TestCallToPublicService), which in knit dev is the loopback
		// the test dials from outside; the autoscaling and load tests,
		// minutes each; TestHelloHTTP2WithEmptyPortName, which Knative skips; and
		// TestServiceValidationWithInvalidPodSpec, which wants a bad
		// container name refused by the pod dry run (Knative's words,
		// "validation callback failed"), where knit's own validation
		// refuses it first.
		name: "e2e",
		tests: "^(TestServiceToServiceCall|TestGradualRollout|TestRollbackBYOName|" +
			"TestWebSocket|TestWebSocketBlueGreenRoute|TestWebSocketWithTimeout|" +
			"TestGRPCUnaryPing|TestGRPCStreamingPing|TestHelloWorld|TestHelloHTTP2WithPortNameH2C|" +
			"TestRevisionTimeout|TestInitScalePositive|TestQueueSideCarResourceLimit|TestEmptyDir|" +
			"TestMultiContainer|TestReadinessAlternatePort|TestReadinessPathAndQuery|TestReadinessGRPCProbe|" +
			"TestImagePullError|TestRoutesNotReady|TestRouteVisibilityChanges|TestSubrouteLocalSTS)$",
	},
}

// knit reads config-features from knit-system (config/store.go), as
// Knative reads it from knative-serving; knit dev and the chart both
// watch it, so an edit takes effect without a restart.
const (
	systemNamespace   = "knit-system"
	featuresConfigMap = "config-features"
	networkConfigMap  = "config-network"
	// testNamespace is where the suite makes its Services
	// (test.ServingFlags.TestNamespace's default).
	testNamespace = "serving-tests"
)

// clients are the API clients the harness itself needs, besides the
// suite's own.
type clients struct {
	kube    kubernetes.Interface
	serving servingclient.Interface
}

// withFeatures runs run with pkg's flags Enabled in config-features and
// puts the ConfigMap's previous data back afterwards, whether run failed
// or not, even when ctx was cancelled: a flag left on would change what
// admission lets the next package, or the next run, do.
func withFeatures(ctx context.Context, c clients, image string, pkg testPackage, run func() error) (err error) {
	on, restore, err := switchOn(ctx, c.kube, pkg.flags)
	if err != nil {
		return fmt.Errorf("%s: switch on %s: %w", pkg.name, strings.Join(pkg.flags, ", "), err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		prev, rerr := restore(rctx)
		if rerr != nil {
			err = errors.Join(err, fmt.Errorf("%s: restore %s/%s: %w", pkg.name, systemNamespace, featuresConfigMap, rerr))
			return
		}
		awaitFeatures(rctx, c.serving, image, pkg, prev)
	}()
	slog.Info("Switched config-features flags on", "package", pkg.name, "flags", strings.Join(pkg.flags, ","))
	awaitFeatures(ctx, c.serving, image, pkg, on)
	return run()
}

// withFlags is data with each flag set to Enabled, its other keys kept.
func withFlags(data map[string]string, flags []string) map[string]string {
	out := maps.Clone(data)
	if out == nil {
		out = map[string]string{}
	}
	for _, f := range flags {
		out[f] = "Enabled"
	}
	return out
}

// switchOn sets flags to Enabled in config-features, keeping its other
// keys, and returns the data it wrote and a restore that writes back the
// data it found (or deletes the ConfigMap when there was none, which
// knit reads as every default) and returns that data.
func switchOn(ctx context.Context, kube kubernetes.Interface, flags []string) (map[string]string, func(context.Context) (map[string]string, error), error) {
	cms := kube.CoreV1().ConfigMaps(systemNamespace)
	var prev, on map[string]string
	existed := false
	// Conflicts are retried (another writer, or a create racing one): the
	// data kept is always what was there just before this write.
	err := retry.OnError(retry.DefaultRetry, func(err error) bool {
		return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
	}, func() error {
		cm, err := cms.Get(ctx, featuresConfigMap, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			existed, prev, on = false, nil, withFlags(nil, flags)
			_, err = cms.Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: featuresConfigMap, Namespace: systemNamespace},
				Data:       on,
			}, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		existed, prev, on = true, maps.Clone(cm.Data), withFlags(cm.Data, flags)
		cm.Data = on
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	restore := func(ctx context.Context) (map[string]string, error) {
		if !existed {
			err := cms.Delete(ctx, featuresConfigMap, metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				err = nil
			}
			return nil, err
		}
		return prev, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cm, err := cms.Get(ctx, featuresConfigMap, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				_, err = cms.Create(ctx, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: featuresConfigMap, Namespace: systemNamespace},
					Data:       prev,
				}, metav1.CreateOptions{})
				return err
			}
			if err != nil {
				return err
			}
			cm.Data = prev
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
			return err
		})
	}
	return on, restore, nil
}

// flagState is what admission shows of a package's flags.
type flagState int

const (
	stateUnknown flagState = iota // neither can be told
	stateOn                       // every flag on
	stateOff                      // every flag off
)

func (s flagState) String() string {
	return [...]string{"unknown", "on", "off"}[s]
}

// wantState is what admission must show once knit has read data: on when
// every flag is Enabled, off when every flag is unset or Disabled (each
// of these flags defaults to Disabled), and unknown for anything else
// (Allowed, or a mix), whose effect on admission differs from flag to
// flag.
func wantState(data map[string]string, flags []string) flagState {
	on, off := 0, 0
	for _, f := range flags {
		switch data[f] {
		case "Enabled":
			on++
		case "", "Disabled":
			off++
		}
	}
	switch {
	case on == len(flags):
		return stateOn
	case off == len(flags):
		return stateOff
	}
	return stateUnknown
}

// probe is how admission shows whether a package's flags are in force:
// spec makes a Service use what the flags gate, and read tells from
// admission's answer to a dry run of its creation which state it saw.
type probe struct {
	spec func(*servingv1.Service)
	read func(admitted *servingv1.Service, err error, flags []string) flagState
}

// acceptedWhenOn reads a Service that admission refuses while any of the
// flags is off: accepted means on, refused naming one of the flags
// (knit's messages name the config-features key) means off. Any other
// refusal says nothing about them.
func acceptedWhenOn(_ *servingv1.Service, err error, flags []string) flagState {
	if err == nil {
		return stateOn
	}
	for _, f := range flags {
		if strings.Contains(err.Error(), f) {
			return stateOff
		}
	}
	return stateUnknown
}

// defaultedWhenOn reads secure-pod-defaults: on, admission gives a
// container that sets no securityContext allowPrivilegeEscalation false
// (with the rest of the restricted profile); off, it leaves it unset.
func defaultedWhenOn(admitted *servingv1.Service, err error, _ []string) flagState {
	if err != nil || admitted == nil || len(admitted.Spec.Template.Spec.Containers) == 0 {
		return stateUnknown
	}
	sc := admitted.Spec.Template.Spec.Containers[0].SecurityContext
	if sc != nil && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		return stateOn
	}
	return stateOff
}

func withInitContainer(s *servingv1.Service) {
	ps := &s.Spec.Template.Spec.PodSpec
	ps.InitContainers = []corev1.Container{{Name: "probe-init", Image: ps.Containers[0].Image}}
}

func withProbedSidecar(s *servingv1.Service) {
	ps := &s.Spec.Template.Spec.PodSpec
	ps.Containers[0].Name = "serving"
	ps.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080}}
	ps.Containers = append(ps.Containers, corev1.Container{
		Name:  "probe-sidecar",
		Image: ps.Containers[0].Image,
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8090)},
		}},
	})
}

// withWritableClaim is what e2e/pvc's Service sets: the test claim
// mounted writable, and the pod's fsGroup.
func withWritableClaim(s *servingv1.Service) {
	ps := &s.Spec.Template.Spec.PodSpec
	ps.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName},
	}}}
	ps.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	fsGroup := int64(testUser)
	ps.SecurityContext = &corev1.PodSecurityContext{FSGroup: &fsGroup}
}

// probeService is the Service a probe dry-runs, before its spec.
func probeService(image string) *servingv1.Service {
	return &servingv1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "knit-conformance-flags", Namespace: testNamespace},
		Spec: servingv1.ServiceSpec{ConfigurationSpec: servingv1.ConfigurationSpec{
			Template: servingv1.RevisionTemplateSpec{Spec: servingv1.RevisionSpec{PodSpec: corev1.PodSpec{
				Containers: []corev1.Container{{Image: image}},
			}}},
		}},
	}
}

// Knit has no signal that it has read a ConfigMap edit, and Knative's CI
// sleeps 30s after each (toggle_feature in test/e2e-common.sh). Admission
// is observable instead: it reads the same config snapshot as the
// reconcilers of its process (webhooks.FromStore), so once a dry-run
// Service that uses what the flags gate is admitted (or refused) as the
// new data says, that process has read it. The chart runs several
// controllers, each watching the ConfigMap on its own and answering
// admission behind one Service; probeAgreements answers in a row, each
// from whichever replica the Service picked, make a lagging one unlikely
// to go unseen. A probe that never agrees within probeLimit (an
// admission whose messages changed, say) only delays the package: the
// tests then show whether the flags took.
const (
	probeAgreements = 5
	probeInterval   = 200 * time.Millisecond
	probeLimit      = time.Minute
	// settle is how long a change no probe can read (a flag restored to
	// Allowed) is given, Knative CI's own wait.
	settle = 30 * time.Second
	// settleShort is settle for a flag only knit's ingress reads.
	settleShort = 5 * time.Second
)

// awaitFeatures waits until knit's admission shows pkg's flags as data
// sets them, or a bounded while when that cannot be told.
func awaitFeatures(ctx context.Context, serving servingclient.Interface, image string, pkg testPackage, data map[string]string) {
	want := wantState(data, pkg.flags)
	if want == stateUnknown || pkg.probe == nil {
		wait := settle
		if pkg.settle != 0 {
			wait = pkg.settle
		}
		slog.Info("No probe reads these flag values: settling", "package", pkg.name, "for", wait)
		sleep(ctx, wait)
		return
	}
	svc := probeService(image)
	pkg.probe.spec(svc)
	began := time.Now()
	agreed := 0
	var last flagState
	var lastErr error
	for {
		admitted, err := serving.ServingV1().Services(testNamespace).Create(ctx, svc.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		last, lastErr = pkg.probe.read(admitted, err, pkg.flags), err
		if last == want {
			agreed++
		} else {
			agreed = 0
		}
		if agreed == probeAgreements {
			slog.Info("Admission shows the flags", "package", pkg.name, "state", want, "after", time.Since(began).Round(10*time.Millisecond))
			return
		}
		if time.Since(began) > probeLimit || ctx.Err() != nil {
			slog.Warn("Admission did not show the flags in time; going on", "package", pkg.name,
				"want", want, "got", last, "error", lastErr, "after", probeLimit)
			return
		}
		sleep(ctx, probeInterval)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
