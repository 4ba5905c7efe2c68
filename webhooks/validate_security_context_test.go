package webhooks

import (
	"context"
	"github.com/knitops/knit/config"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func TestValidateSecurityContext(t *testing.T) {
	const p = "spec.containers[0].securityContext"
	tests := []struct {
		name string
		sc   *corev1.SecurityContext
		want []string
	}{{
		name: "none",
	}, {
		name: "every field Knative allows, in bounds",
		sc: &corev1.SecurityContext{
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}, ReadOnlyRootFilesystem: ptr.To(true),
			RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](2147483647), RunAsNonRoot: ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}, {
		// Knative's conformance TestInvalidUID: runAsUser -10 is refused.
		name: "a negative user, a group past int32",
		sc:   &corev1.SecurityContext{RunAsUser: ptr.To[int64](-10), RunAsGroup: ptr.To[int64](2147483648)},
		want: []string{
			"expected 0 <= -10 <= 2147483647: " + p + ".runAsUser",
			"expected 0 <= 2147483648 <= 2147483647: " + p + ".runAsGroup",
		},
	}, {
		name: "fields Knative leaves out, and an added capability",
		sc: &corev1.SecurityContext{
			Privileged: ptr.To(true), SELinuxOptions: &corev1.SELinuxOptions{User: "u"}, ProcMount: ptr.To(corev1.UnmaskedProcMount),
			Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}},
		},
		want: []string{
			"must not set the field(s): " + p + ".privileged",
			"must not set the field(s): " + p + ".seLinuxOptions",
			"must not set the field(s): " + p + ".procMount",
			"must not set the field(s): " + p + ".capabilities.add\nconfig-features kubernetes.containerspec-addcapabilities is Disabled",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validateSecurityContext(tc.sc, field.NewPath("spec", "containers").Index(0).Child("securityContext"), DefaultConfig().Features))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidatePodSecurityContext(t *testing.T) {
	const p = "spec.securityContext"
	on := DefaultConfig().Features
	on.PodSpecSecurityContext = config.FeatureEnabled
	secure := DefaultConfig().Features
	secure.SecurePodDefaults = config.FeatureEnabled
	tests := []struct {
		name     string
		sc       *corev1.PodSecurityContext
		features *config.Features // default: kubernetes.podspec-securitycontext Enabled
		want     []string
	}{{
		name: "none",
	}, {
		name:     "flag off: nothing may be set",
		features: ptr.To(DefaultConfig().Features),
		sc:       &corev1.PodSecurityContext{FSGroup: ptr.To[int64](65532), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		want: []string{
			"must not set the field(s): " + p + ".fsGroup\nconfig-features kubernetes.podspec-securitycontext is Disabled",
			"must not set the field(s): " + p + ".seccompProfile\nconfig-features kubernetes.podspec-securitycontext is Disabled",
		},
	}, {
		name:     "flag off, secure-pod-defaults on: the pod may opt out of seccomp",
		features: &secure,
		sc:       &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}},
	}, {
		name:     "flag off, secure-pod-defaults on: a Localhost profile is still refused",
		features: &secure,
		sc:       &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("x.json")}},
		want:     []string{"must not set the field(s): " + p + ".seccompProfile\nconfig-features kubernetes.podspec-securitycontext is Disabled"},
	}, {
		name: "every field knit allows, in bounds",
		sc: &corev1.PodSecurityContext{
			RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](1000), RunAsNonRoot: ptr.To(true), FSGroup: ptr.To[int64](0),
			SupplementalGroups: []int64{1, 2}, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}, {
		name: "IDs out of bounds",
		sc:   &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](-1), FSGroup: ptr.To[int64](-2), SupplementalGroups: []int64{5, -3}},
		want: []string{
			"expected 0 <= -1 <= 2147483647: " + p + ".runAsUser",
			"expected 0 <= -2 <= 2147483647: " + p + ".fsGroup",
			"expected 0 <= -3 <= 2147483647: " + p + ".supplementalGroups[1]",
		},
	}, {
		name: "fields Knative never allows",
		sc: &corev1.PodSecurityContext{
			Sysctls: []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}}, WindowsOptions: &corev1.WindowsSecurityContextOptions{RunAsUserName: ptr.To("u")},
		},
		want: []string{
			"must not set the field(s): " + p + ".windowsOptions",
			"must not set the field(s): " + p + ".sysctls",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			features := on
			if tc.features != nil {
				features = *tc.features
			}
			got := messages(validatePodSecurityContext(tc.sc, field.NewPath("spec", "securityContext"), features))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// A Service whose container runs as user -10 is refused, in the words
// Knative's webhook uses.
func TestServiceWithInvalidUIDIsRefused(t *testing.T) {
	s := service("hello", defaultedSpec(), latest(100))
	s.Spec.Template.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](-10)}
	_, err := serviceHooks().ValidateCreate(context.Background(), s)
	want := "validation failed: expected 0 <= -10 <= 2147483647: spec.template.spec.containers[0].securityContext.runAsUser"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v, want it to contain %q", err, want)
	}
}
