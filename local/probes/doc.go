// Package probes runs a container's readiness and liveness probes as the
// kubelet runs them: httpGet (with headers, redirects a success,
// certificates unchecked), tcpSocket, grpc (the app's grpc.health.v1
// service) and exec, on the probe's initialDelaySeconds, periodSeconds,
// timeoutSeconds and thresholds with Kubernetes' defaults.
//
// A Prober probes one Target: the container (whose name its messages
// give and whose ports resolve a named port or port 0), the address
// HTTP, TCP and gRPC probes dial and the mapping of declared ports to the
// ports that listen there (knit dev remaps them per replica). Readiness
// reports readiness as it changes, probing an HTTP or TCP probe every few
// milliseconds until it first succeeds, as Knative's queue-proxy does;
// Liveness reports once, with the kubelet's "Liveness probe failed: …",
// after failureThreshold failures in a row.
//
// It does not know where a container runs: an exec probe's command is
// run by Target.Exec, which the runtime supplies (in the container's
// network, view and user, or through runc exec). What a failed probe
// does to a replica — its status, killing and restarting the container,
// the preStop hook — is package runtime's too.
package probes
