package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateProbes(t *testing.T) {
	const p = "spec.containers[0]"
	httpGet := func(port intstr.IntOrString) corev1.ProbeHandler {
		return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: port}}
	}
	serving := func(liveness, readiness *corev1.Probe) corev1.Container {
		return corev1.Container{Image: image, Ports: []corev1.ContainerPort{{Name: "h2c", ContainerPort: 8080}},
			LivenessProbe: liveness, ReadinessProbe: readiness}
	}
	tests := []struct {
		name    string
		c       corev1.Container
		sidecar bool
		want    []string
	}{{
		name: "the defaulted probe",
		c:    serving(nil, tcpProbe()),
	}, {
		name: "probes naming the serving port, or by number",
		c: serving(&corev1.Probe{ProbeHandler: httpGet(intstr.FromString("h2c"))},
			&corev1.Probe{ProbeHandler: httpGet(intstr.FromInt32(8080)), SuccessThreshold: 1, PeriodSeconds: 5}),
	}, {
		name: "a probe naming another port",
		c:    serving(&corev1.Probe{ProbeHandler: httpGet(intstr.FromString("admin"))}, nil),
		want: []string{"invalid value: admin: " + p + ".livenessProbe.httpGet.port\nprobe port must match container port"},
	}, {
		name: "no handler, two handlers",
		c: serving(&corev1.Probe{}, &corev1.Probe{SuccessThreshold: 1, ProbeHandler: corev1.ProbeHandler{
			TCPSocket: &corev1.TCPSocketAction{}, Exec: &corev1.ExecAction{Command: []string{"true"}},
		}}),
		want: []string{
			"missing field(s): " + p + ".livenessProbe\nset one of httpGet, tcpSocket, exec or grpc",
			"set only one of tcpSocket, exec: " + p + ".readinessProbe",
		},
	}, {
		name: "aggressive probing (periodSeconds 0) takes no timeout or threshold",
		c: serving(nil, &corev1.Probe{ProbeHandler: httpGet(intstr.FromInt32(0)),
			TimeoutSeconds: 1, FailureThreshold: 3}),
		want: []string{
			"invalid value: 0: " + p + ".readinessProbe.successThreshold\nmust be between 1 and 2147483647",
			"must not be set when periodSeconds is 0: " + p + ".readinessProbe.failureThreshold",
			"must not be set when periodSeconds is 0: " + p + ".readinessProbe.timeoutSeconds",
		},
	}, {
		name: "negative settings",
		c: serving(nil, &corev1.Probe{ProbeHandler: httpGet(intstr.FromInt32(0)), SuccessThreshold: 1,
			PeriodSeconds: 1, InitialDelaySeconds: -1, TimeoutSeconds: -1}),
		want: []string{
			"invalid value: -1: " + p + ".readinessProbe.initialDelaySeconds\nmust be between 0 and 2147483647",
			"invalid value: -1: " + p + ".readinessProbe.timeoutSeconds\nmust be between 0 and 2147483647",
		},
	}, {
		name:    "a sidecar may not be probed",
		c:       corev1.Container{Image: "envoy", LivenessProbe: tcpProbe(), ReadinessProbe: tcpProbe()},
		sidecar: true,
		want: []string{
			"only the container that serves requests may be probed (config-features multi-container-probing is off): " + p + ".livenessProbe",
			"only the container that serves requests may be probed (config-features multi-container-probing is off): " + p + ".readinessProbe",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := field.NewPath("spec", "containers").Index(0)
			var errs field.ErrorList
			if tc.sidecar {
				errs = validateSidecarProbes(tc.c, path)
			} else {
				errs = validateServingProbes(tc.c, path)
			}
			if diff := cmp.Diff(tc.want, messages(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
