package resources

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// Who runs which of the serving container's probes, as in Knative
// (pkg/reconciler/revision/resources: makeContainer, queue.go):
//
//   - httpGet, tcpSocket and grpc readiness probes move to the
//     queue-proxy, which probes the app aggressively while it starts and
//     answers the kubelet's (or the local runtime's) probe of the pod for it;
//   - an exec readiness probe stays on the app, where only the kubelet (or
//     the local runtime) can run it, and the queue-proxy gets a TCP probe of
//     the user port with the same settings, so it still waits for the app
//     to listen and the pod is ready only when both pass;
//   - the liveness probe stays on the app, pointed at the user port.

// kubeletReadinessProbe is the readiness probe left on the app: the exec
// probe the queue-proxy cannot run, nothing otherwise.
func kubeletReadinessProbe(p *corev1.Probe) *corev1.Probe {
	if p == nil || p.Exec == nil {
		return nil
	}
	return p.DeepCopy()
}

// livenessProbe is the app's liveness probe with an httpGet or tcpSocket
// port rewritten to the user port, as Knative rewrites it: the Revision
// may only name the one port it serves on, by number or name, and the
// kubelet must reach the app there, not the queue-proxy.
func livenessProbe(p *corev1.Probe, userPort int32) *corev1.Probe {
	if p == nil {
		return nil
	}
	p = p.DeepCopy()
	switch {
	case p.HTTPGet != nil:
		p.HTTPGet.Port = intstr.FromInt32(userPort)
	case p.TCPSocket != nil:
		p.TCPSocket.Port = intstr.FromInt32(userPort)
	}
	return p
}

// servingProbe hands the app's readiness probe to the queue-proxy as JSON.
// A probe of the serving port is written with port 0, which the
// queue-proxy reads as USER_PORT: the same port on Kubernetes, and the
// one that follows the app when a local runtime remaps its ports. An exec
// probe becomes a TCP probe of the user port (see kubeletReadinessProbe).
func servingProbe(rev *servingv1.Revision) *corev1.Probe {
	p := rev.Spec.Containers[ServingContainer(rev)].ReadinessProbe.DeepCopy()
	if p == nil {
		return nil
	}
	user := UserPort(rev)
	servingPort := func(port intstr.IntOrString) intstr.IntOrString {
		if port.Type == intstr.Int && port.IntVal == user {
			return intstr.IntOrString{}
		}
		return port
	}
	switch {
	case p.TCPSocket != nil:
		p.TCPSocket.Port = servingPort(p.TCPSocket.Port)
	case p.HTTPGet != nil:
		p.HTTPGet.Port = servingPort(p.HTTPGet.Port)
	case p.GRPC != nil:
		p.GRPC.Port = servingPort(intstr.FromInt32(p.GRPC.Port)).IntVal
	case p.Exec != nil:
		p.Exec, p.TCPSocket = nil, &corev1.TCPSocketAction{}
	}
	return p
}

// sidecarProbes are the readiness probes of the containers that do not
// serve, which the queue-proxy runs beside the app's under
// multi-container-probing (as Knative's makeQueueContainer): the
// activator and the kubelet ask the queue-proxy whether the replica is
// ready, and a request must not reach an app whose sidecar is not. Each
// names its own port (admission sees to it). An exec probe stays with
// the kubelet (or the local runtime) alone: the queue-proxy cannot run it.
func sidecarProbes(rev *servingv1.Revision) []*corev1.Probe {
	serving := ServingContainer(rev)
	var out []*corev1.Probe
	for i, c := range rev.Spec.Containers {
		if i == serving || c.ReadinessProbe == nil || c.ReadinessProbe.Exec != nil {
			continue
		}
		out = append(out, c.ReadinessProbe.DeepCopy())
	}
	return out
}

// queueReadinessProbes is SERVING_READINESS_PROBE: the app's probe alone
// as one JSON object, or with multiContainer a list with the sidecars'.
func queueReadinessProbes(rev *servingv1.Revision, multiContainer bool) string {
	var v any
	probes := []*corev1.Probe{servingProbe(rev)}
	if multiContainer {
		probes = append(probes, sidecarProbes(rev)...)
	}
	switch {
	case len(probes) > 1:
		if probes[0] == nil { // the serving port's TCP probe, as an empty value means
			probes[0] = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{}}}
		}
		v = probes
	case probes[0] != nil:
		v = probes[0]
	default:
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
