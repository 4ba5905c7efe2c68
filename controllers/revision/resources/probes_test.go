package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// Each probe of the serving container ends where Knative puts it: the
// kubelet runs exec readiness and liveness probes on the app, the
// queue-proxy every other readiness probe (an exec one as a TCP probe).
func TestProbePlacement(t *testing.T) {
	execProbe := func(period int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/ko-app/readiness", "probe"}}},
			PeriodSeconds: period, SuccessThreshold: 1}
	}
	type placement struct {
		AppReadiness, AppLiveness *corev1.Probe
		QueueProbe                string // SERVING_READINESS_PROBE
	}
	tests := []struct {
		name                string
		readiness, liveness *corev1.Probe
		want                placement
	}{{
		name:      "httpGet readiness moves to the queue-proxy",
		readiness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz/readiness"}}},
		want:      placement{QueueProbe: `{"httpGet":{"path":"/healthz/readiness","port":0}}`},
	}, {
		name:      "tcpSocket readiness moves to the queue-proxy",
		readiness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{}}, PeriodSeconds: 1},
		want:      placement{QueueProbe: `{"tcpSocket":{"port":0},"periodSeconds":1}`},
	}, {
		name:      "grpc readiness moves to the queue-proxy",
		readiness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 8080}}},
		want:      placement{QueueProbe: `{"grpc":{"port":8080,"service":null}}`},
	}, {
		name:      "exec readiness stays on the app; the queue-proxy waits for the user port",
		readiness: execProbe(1),
		want: placement{
			AppReadiness: execProbe(1),
			QueueProbe:   `{"tcpSocket":{"port":0},"periodSeconds":1,"successThreshold":1}`,
		},
	}, {
		name:      "exec readiness at period 0 keeps period 0 on both: aggressive probing is the queue-proxy's",
		readiness: execProbe(0),
		want: placement{
			AppReadiness: execProbe(0),
			QueueProbe:   `{"tcpSocket":{"port":0},"successThreshold":1}`,
		},
	}, {
		name: "httpGet liveness stays on the app, pointed at the user port",
		liveness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz/liveness", Port: intstr.FromString("http")}},
			PeriodSeconds: 1, FailureThreshold: 3},
		want: placement{AppLiveness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz/liveness", Port: intstr.FromInt32(9000)}},
			PeriodSeconds: 1, FailureThreshold: 3}},
	}, {
		name:      "grpc readiness on the user port moves to the queue-proxy as port 0 (the user port, wherever knit dev puts it)",
		readiness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000, Service: ptr.To("api")}}},
		want:      placement{QueueProbe: `{"grpc":{"port":0,"service":"api"}}`},
	}, {
		name:      "grpc readiness on another port keeps it",
		readiness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9090}}},
		want:      placement{QueueProbe: `{"grpc":{"port":9090,"service":null}}`},
	}, {
		name:     "tcpSocket liveness on port 0 is the user port",
		liveness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{}}},
		want:     placement{AppLiveness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(9000)}}}},
	}, {
		name:     "exec liveness stays as written",
		liveness: execProbe(5),
		want:     placement{AppLiveness: execProbe(5)},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rev := testRevision(func(r *servingv1.Revision) {
				c := &r.Spec.Containers[0]
				c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 9000}}
				c.ReadinessProbe, c.LivenessProbe = tt.readiness, tt.liveness
			})
			before := rev.DeepCopy()
			cs := MakeDeployment(rev, DeploymentConfig{}).Spec.Template.Spec.Containers
			got := placement{
				AppReadiness: cs[0].ReadinessProbe, AppLiveness: cs[0].LivenessProbe,
				QueueProbe: envMap(cs[1].Env)["SERVING_READINESS_PROBE"],
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("probes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, rev); diff != "" {
				t.Errorf("MakeDeployment changed the Revision (-before +after):\n%s", diff)
			}
			if cs[1].LivenessProbe != nil {
				t.Errorf("queue-proxy liveness probe = %+v, want none", cs[1].LivenessProbe)
			}
		})
	}
}

// A sidecar keeps its probes: the kubelet (or the local runtime) runs them.
func TestSidecarProbesStay(t *testing.T) {
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(9100)}}}
	rev := testRevision(func(r *servingv1.Revision) {
		r.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080}}
		r.Spec.Containers = append(r.Spec.Containers, corev1.Container{Name: "sidecar", Image: "ko://example.com/sidecar", ReadinessProbe: probe})
	})
	cs := MakeDeployment(rev, DeploymentConfig{}).Spec.Template.Spec.Containers
	if diff := cmp.Diff(probe, cs[1].ReadinessProbe); diff != "" {
		t.Errorf("sidecar readiness probe (-want +got):\n%s", diff)
	}
}
