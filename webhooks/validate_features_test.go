package webhooks

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

// A Revision may not pick its nodes, tolerate taints or choose a runtime
// class unless the operator turned the matching config-features flag on,
// as in Knative, whose defaults leave them all off.
func TestSchedulingFieldsAreGatedByFeatures(t *testing.T) {
	const p = "spec.template.spec"
	scheduled := defaultedSpec()
	scheduled.NodeSelector = map[string]string{"node-role.kubernetes.io/control-plane": ""}
	scheduled.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	scheduled.RuntimeClassName = ptr.To("runc")
	on := DefaultConfig()
	on.Features.PodSpecNodeSelector, on.Features.PodSpecTolerations = config.FeatureEnabled, config.FeatureAllowed
	on.Features.PodSpecRuntimeClassName = config.FeatureEnabled
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{{
		name: "Knative's defaults refuse them",
		cfg:  DefaultConfig(),
		want: []string{
			"must not set the field(s): " + p + ".nodeSelector\nconfig-features kubernetes.podspec-nodeselector is Disabled",
			"must not set the field(s): " + p + ".runtimeClassName\nconfig-features kubernetes.podspec-runtimeclassname is Disabled",
			"must not set the field(s): " + p + ".tolerations\nconfig-features kubernetes.podspec-tolerations is Disabled",
		},
	}, {
		name: "Enabled or Allowed accept them",
		cfg:  on,
	}, {
		name: "a Config nobody filled in refuses them",
		cfg:  Config{ContainerConcurrencyMaxLimit: 1000, MaxRevisionTimeoutSeconds: 600},
		want: []string{
			"must not set the field(s): " + p + ".nodeSelector\nconfig-features kubernetes.podspec-nodeselector is Disabled",
			"must not set the field(s): " + p + ".runtimeClassName\nconfig-features kubernetes.podspec-runtimeclassname is Disabled",
			"must not set the field(s): " + p + ".tolerations\nconfig-features kubernetes.podspec-tolerations is Disabled",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validateRevisionSpec(scheduled, field.NewPath("spec", "template", "spec"), tc.cfg))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
	// An empty map or list is not a request to schedule anywhere.
	empty := defaultedSpec()
	empty.NodeSelector, empty.Tolerations = map[string]string{}, []corev1.Toleration{}
	if errs := validateRevisionSpec(empty, field.NewPath("spec"), DefaultConfig()); len(errs) > 0 {
		t.Errorf("empty nodeSelector and tolerations refused: %v", errs)
	}
}

// TestEveryPodSpecFlag is the admission half of config-features: for each
// flag that gates a field, a Revision using the field under Disabled,
// Allowed and Enabled, refused or accepted as Knative's webhook decides
// (most flags let the field through unless Disabled; init containers,
// claims, several containers, sidecar probes and added capabilities want
// Enabled exactly).
func TestEveryPodSpecFlag(t *testing.T) {
	sidecar := func(s *servingv1.RevisionSpec) *corev1.Container {
		s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080}}
		s.Containers = append(s.Containers, corev1.Container{Name: "side", Image: image})
		return &s.Containers[1]
	}
	tests := []struct {
		flag string
		use  func(*servingv1.RevisionSpec)
		// allowed: Allowed lets the field through as Enabled does.
		allowed bool
	}{
		{"kubernetes.podspec-affinity", func(s *servingv1.RevisionSpec) { s.Affinity = &corev1.Affinity{} }, true},
		{"kubernetes.podspec-topologyspreadconstraints", func(s *servingv1.RevisionSpec) {
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone"}}
		}, true},
		{"kubernetes.podspec-hostaliases", func(s *servingv1.RevisionSpec) {
			s.HostAliases = []corev1.HostAlias{{IP: "127.0.0.1", Hostnames: []string{"db"}}}
		}, true},
		{"kubernetes.podspec-nodeselector", func(s *servingv1.RevisionSpec) { s.NodeSelector = map[string]string{"a": "b"} }, true},
		{"kubernetes.podspec-runtimeclassname", func(s *servingv1.RevisionSpec) { s.RuntimeClassName = ptr.To("gvisor") }, true},
		{"kubernetes.podspec-tolerations", func(s *servingv1.RevisionSpec) {
			s.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		}, true},
		{"kubernetes.podspec-shareprocessnamespace", func(s *servingv1.RevisionSpec) { s.ShareProcessNamespace = ptr.To(true) }, true},
		{"kubernetes.podspec-priorityclassname", func(s *servingv1.RevisionSpec) { s.PriorityClassName = "high" }, true},
		{"kubernetes.podspec-schedulername", func(s *servingv1.RevisionSpec) { s.SchedulerName = "other" }, true},
		{"kubernetes.podspec-dnspolicy", func(s *servingv1.RevisionSpec) { s.DNSPolicy = corev1.DNSDefault }, true},
		{"kubernetes.podspec-dnsconfig", func(s *servingv1.RevisionSpec) {
			s.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"127.0.0.53"}}
		}, true},
		{"kubernetes.podspec-securitycontext", func(s *servingv1.RevisionSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To[int64](2000)}
		}, true},
		{"kubernetes.podspec-fieldref", func(s *servingv1.RevisionSpec) {
			s.Containers[0].Env = []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
		}, true},
		{"kubernetes.podspec-volumes-emptydir", func(s *servingv1.RevisionSpec) {
			s.Volumes = []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}
		}, false},
		{"kubernetes.podspec-persistent-volume-claim", func(s *servingv1.RevisionSpec) {
			s.Volumes = []corev1.Volume{{Name: "db", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "db", ReadOnly: true}}}}
			s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "db", MountPath: "/db", ReadOnly: true}}
		}, false},
		{"kubernetes.podspec-init-containers", func(s *servingv1.RevisionSpec) {
			s.InitContainers = []corev1.Container{{Name: "setup", Image: image}}
		}, false},
		{"multi-container", func(s *servingv1.RevisionSpec) { sidecar(s) }, false},
		{"multi-container-probing", func(s *servingv1.RevisionSpec) {
			sidecar(s).ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
				TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(9090)}}, SuccessThreshold: 1}
		}, false},
		{"kubernetes.containerspec-addcapabilities", func(s *servingv1.RevisionSpec) {
			s.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}
		}, false},
	}
	keys := map[string]bool{}
	for _, tc := range tests {
		keys[tc.flag] = true
		for _, v := range []config.Feature{config.FeatureDisabled, config.FeatureAllowed, config.FeatureEnabled} {
			t.Run(tc.flag+"="+string(v), func(t *testing.T) {
				features, err := config.ParseFeatures(map[string]string{
					// The flags a test's field also needs, on; its own last.
					"multi-container": "Enabled", "kubernetes.podspec-persistent-volume-claim": "Enabled", tc.flag: string(v)})
				if err != nil {
					t.Fatal(err)
				}
				cfg := DefaultConfig()
				cfg.Features = *features
				spec := defaultedSpec()
				tc.use(&spec)
				errs := validateRevisionSpec(spec, field.NewPath("spec"), cfg)
				want := v == config.FeatureEnabled || (v == config.FeatureAllowed && tc.allowed)
				if got := len(errs) == 0; got != want {
					t.Errorf("accepted = %v, want %v; errors: %v", got, want, messages(errs))
				}
				if !want && len(errs) > 0 && !strings.Contains(strings.Join(messages(errs), "\n"), tc.flag) {
					t.Errorf("the refusal does not name the flag %s: %v", tc.flag, messages(errs))
				}
			})
		}
	}
	// Every flag is either in this table or a behaviour tested where it
	// acts: a new Knative flag must be placed in one or the other.
	behaviours := map[string]bool{"kubernetes.podspec-dryrun": true, "secure-pod-defaults": true,
		"queueproxy.resource-defaults": true, "queueproxy.mount-podinfo": true,
		"tag-header-based-routing": true, "autodetect-http2": true, "kubernetes.podspec-persistent-volume-write": true}
	for _, key := range config.FeatureKeys() {
		if !keys[key] && !behaviours[key] {
			t.Errorf("config-features %s is neither tested here nor listed as a behaviour", key)
		}
	}
}

// kubernetes.podspec-dryrun: Enabled dry-runs every template (strict only
// when asked), Allowed only those whose object asks, Disabled none.
func TestDryRunMode(t *testing.T) {
	ask := func(v string) map[string]string { return map[string]string{config.DryRunAnnotation: v} }
	tests := []struct {
		flag config.Feature
		anns map[string]string
		want string
	}{
		{config.FeatureEnabled, nil, dryRunEnabled},
		{config.FeatureEnabled, ask("strict"), dryRunStrict},
		{config.FeatureEnabled, ask("disabled"), dryRunEnabled},
		{config.FeatureAllowed, nil, ""},
		{config.FeatureAllowed, ask("Enabled"), dryRunEnabled},
		{config.FeatureAllowed, ask("strict"), dryRunStrict},
		{config.FeatureAllowed, ask("yes"), ""},
		{config.FeatureDisabled, ask("strict"), ""},
	}
	for _, tc := range tests {
		if got := dryRunMode(tc.flag, tc.anns); got != tc.want {
			t.Errorf("dryRunMode(%s, %v) = %q, want %q", tc.flag, tc.anns, got, tc.want)
		}
	}
}
