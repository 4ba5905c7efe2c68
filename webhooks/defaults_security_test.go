package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

func secureDefaultsOn() Config {
	cfg := DefaultConfig()
	cfg.Features.SecurePodDefaults = config.FeatureEnabled
	return cfg
}

func restricted(add ...corev1.Capability) *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: add},
		RunAsNonRoot:             ptr.To(true),
	}
}

func TestSecurePodDefaults(t *testing.T) {
	unsafe := &corev1.SecurityContext{
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{}},
		RunAsNonRoot:             ptr.To(false),
		AllowPrivilegeEscalation: ptr.To(true),
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined},
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		pod  *corev1.PodSecurityContext
		in   []corev1.Container
		want []*corev1.SecurityContext
	}{{
		name: "off: nothing added",
		cfg:  DefaultConfig(),
		in:   []corev1.Container{{Image: "app"}},
		want: []*corev1.SecurityContext{nil},
	}, {
		name: "on: the restricted level where unset",
		cfg:  secureDefaultsOn(),
		in:   []corev1.Container{{Image: "app"}},
		want: []*corev1.SecurityContext{restricted()},
	}, {
		name: "a port below 1024 gets NET_BIND_SERVICE back",
		cfg:  secureDefaultsOn(),
		in:   []corev1.Container{{Image: "app", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}},
		want: []*corev1.SecurityContext{restricted(netBindService)},
	}, {
		name: "what the Revision sets is kept, field by field",
		cfg:  secureDefaultsOn(),
		in:   []corev1.Container{{Image: "app", SecurityContext: unsafe.DeepCopy()}},
		want: []*corev1.SecurityContext{unsafe},
	}, {
		name: "the pod's seccomp profile and runAsNonRoot stand for the containers'",
		cfg:  secureDefaultsOn(),
		pod:  &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(false), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}},
		in:   []corev1.Container{{Image: "app"}},
		want: []*corev1.SecurityContext{{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}},
	}, {
		name: "every container",
		cfg:  secureDefaultsOn(),
		in:   []corev1.Container{{Image: "app", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}, {Image: "sidecar"}},
		want: []*corev1.SecurityContext{restricted(), restricted()},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rs := &servingv1.RevisionSpec{PodSpec: servingv1.PodSpec{Containers: tc.in, SecurityContext: tc.pod}}
			defaultRevisionSpec(rs, tc.cfg)
			var got []*corev1.SecurityContext
			for _, c := range rs.Containers {
				got = append(got, c.SecurityContext)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("securityContexts (-want +got):\n%s", diff)
			}
			// What admission defaults, it must admit.
			if errs := validateContainers(rs.Containers, field.NewPath("spec"), tc.cfg.Features); len(errs) != 0 {
				t.Errorf("the defaulted containers are refused: %v", errs.ToAggregate())
			}
		})
	}
}

// Adding a capability stays refused, but for NET_BIND_SERVICE alone
// under secure-pod-defaults.
func TestCapabilityAddUnderSecureDefaults(t *testing.T) {
	path := field.NewPath("spec", "containers").Index(0).Child("securityContext")
	for _, tc := range []struct {
		name    string
		cfg     Config
		add     []corev1.Capability
		refused bool
	}{
		{"off: NET_BIND_SERVICE refused", DefaultConfig(), []corev1.Capability{netBindService}, true},
		{"on: NET_BIND_SERVICE alone", secureDefaultsOn(), []corev1.Capability{netBindService}, false},
		{"on: another", secureDefaultsOn(), []corev1.Capability{"SYS_ADMIN"}, true},
		{"on: NET_BIND_SERVICE and another", secureDefaultsOn(), []corev1.Capability{netBindService, "NET_ADMIN"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: tc.add}}
			errs := validateSecurityContext(sc, path, tc.cfg.Features)
			if refused := len(errs) > 0; refused != tc.refused {
				t.Fatalf("refused = %v (%v), want %v", refused, errs.ToAggregate(), tc.refused)
			}
			if tc.refused && errs[0].Field != "spec.containers[0].securityContext.capabilities.add" {
				t.Errorf("error on %s, want capabilities.add", errs[0].Field)
			}
		})
	}
}
