package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateContainers(t *testing.T) {
	const p = "spec.template.spec.containers"
	port := func(n int32) []corev1.ContainerPort { return []corev1.ContainerPort{{ContainerPort: n}} }
	tests := []struct {
		name string
		cs   []corev1.Container
		want []string
	}{{
		name: "one container, no port (defaulting adds 8080)",
		cs:   []corev1.Container{{Name: "user-container", Image: image}},
	}, {
		name: "a serving container and a sidecar",
		cs:   []corev1.Container{{Name: "app", Image: image, Ports: port(8080)}, {Name: "proxy", Image: "envoy"}},
	}, {
		name: "no container",
		want: []string{"missing field(s): " + p + "\na Revision needs a container to serve requests"},
	}, {
		name: "several containers, none with a port",
		cs:   []corev1.Container{{Name: "a", Image: image}, {Name: "b", Image: image}},
		want: []string{"missing field(s): " + p + "\nwith several containers, the one that serves requests must declare its port in ports"},
	}, {
		name: "several containers with a port",
		cs:   []corev1.Container{{Name: "a", Image: image, Ports: port(8080)}, {Name: "b", Image: image, Ports: port(8081)}},
		want: []string{"only one container may declare a port, and spec.template.spec.containers[0] already does: " + p + "[1].ports"},
	}, {
		name: "two ports on one container",
		cs:   []corev1.Container{{Name: "a", Image: image, Ports: []corev1.ContainerPort{{ContainerPort: 8080}, {ContainerPort: 8081}}}},
		want: []string{"only one port may be declared: the one requests are sent to: " + p + "[0].ports[1]"},
	}, {
		name: "fields Knative does not allow, and no image",
		cs: []corev1.Container{{
			Name: "a", Stdin: true, TTY: true,
			Lifecycle:    &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "5"}}}},
			StartupProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{}}},
		}},
		want: []string{
			"must not set the field(s): " + p + "[0].startupProbe",
			"must not set the field(s): " + p + "[0].lifecycle",
			"must not set the field(s): " + p + "[0].stdin",
			"must not set the field(s): " + p + "[0].tty",
			"missing field(s): " + p + "[0].image",
		},
	}, {
		name: "duplicate and reserved names",
		cs:   []corev1.Container{{Name: "queue-proxy", Image: image, Ports: port(8080)}, {Name: "queue-proxy", Image: image}},
		want: []string{
			"invalid value: queue-proxy: " + p + "[0].name\nis reserved for knit's queue-proxy",
			"duplicate value: queue-proxy: " + p + "[1].name",
			"invalid value: queue-proxy: " + p + "[1].name\nis reserved for knit's queue-proxy",
		},
	}, {
		name: "a name Kubernetes refuses, an image that is no reference",
		cs:   []corev1.Container{{Name: "App_1", Image: "registry.example.com/Team/app:1.2", Ports: port(8080)}},
		want: []string{
			"invalid value: App_1: " + p + "[0].name\na lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
			"invalid value: registry.example.com/Team/app:1.2: " + p + "[0].image\nFailed to parse image reference: could not parse reference: registry.example.com/Team/app:1.2",
		},
	}, {
		name: "reserved environment variables; a sidecar may set PORT",
		cs: []corev1.Container{
			{Name: "app", Image: image, Ports: port(8080), Env: []corev1.EnvVar{{Name: "PORT", Value: "1"}, {Name: "TARGET", Value: "x"}}},
			{Name: "side", Image: image, Env: []corev1.EnvVar{{Name: "PORT", Value: "1"}, {Name: "K_REVISION", Value: "x"}}},
		},
		want: []string{
			"invalid value: PORT: " + p + "[0].env[0].name\nis a reserved environment variable",
			"invalid value: K_REVISION: " + p + "[1].env[1].name\nis a reserved environment variable",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validateContainers(tc.cs, field.NewPath("spec", "template", "spec"), DefaultConfig().Features))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
