package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidatePort(t *testing.T) {
	const p = "spec.containers[0].ports[0]"
	tests := []struct {
		name string
		port corev1.ContainerPort
		want []string
	}{{
		name: "plain",
		port: corev1.ContainerPort{ContainerPort: 8080},
	}, {
		name: "h2c over TCP",
		port: corev1.ContainerPort{Name: "h2c", ContainerPort: 9000, Protocol: corev1.ProtocolTCP},
	}, {
		name: "a queue-proxy port",
		port: corev1.ContainerPort{ContainerPort: 8012},
		want: []string{"invalid value: 8012: " + p + ".containerPort\n8012 is a reserved port, please use a different value"},
	}, {
		name: "a name Knative gives no meaning, UDP and a host port",
		port: corev1.ContainerPort{Name: "web", ContainerPort: 8080, Protocol: corev1.ProtocolUDP, HostPort: 80},
		want: []string{
			"must not set the field(s): " + p + ".hostPort",
			"invalid value: UDP: " + p + ".protocol\nsupported values: \"TCP\"",
			"invalid value: web: " + p + ".name\nsupported values: \"\", \"http1\", \"h2c\"",
		},
	}, {
		name: "out of range",
		port: corev1.ContainerPort{ContainerPort: 70000},
		want: []string{"invalid value: 70000: " + p + ".containerPort\nmust be between 0 and 65535"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validatePort(tc.port, field.NewPath("spec", "containers").Index(0).Child("ports").Index(0)))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
