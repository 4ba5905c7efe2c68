package runtime

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// watchLiveness runs c's liveness probe against p for as long as p runs.
// The channel (nil without a probe, so it never fires in a select) gets
// why the probe failed, at most once.
func (r *replica) watchLiveness(ctx context.Context, c *corev1.Container, p *process, l launch) <-chan string {
	if c.LivenessProbe == nil {
		return nil
	}
	failed := make(chan string, 1)
	ctx, pr := r.proberWhile(ctx, c.LivenessProbe, c, p, l)
	go pr.Liveness(ctx, func(msg string) { failed <- msg })
	return failed
}

// killUnhealthy stops a container whose liveness probe failed the way the
// kubelet does before it restarts it: the preStop hook, SIGTERM, then
// SIGKILL after the grace period (the probe's terminationGracePeriodSeconds
// when set, else the pod's). Knative's hook asks the queue-proxy to drain;
// the queue-proxy, not stopping itself, cancels that drain within a second,
// so the replica serves again once the app is back.
func (r *replica) killUnhealthy(c *corev1.Container, p *process, l launch, why string, log logr.Logger) {
	log.Info("Container failed liveness probe, will be restarted", "probe", why)
	grace := r.gracePeriod()
	if s := c.LivenessProbe.TerminationGracePeriodSeconds; s != nil {
		grace = time.Duration(*s) * time.Second
	}
	began := time.Now()
	r.preStop(c, l, grace, log)
	p.stop(max(grace-time.Since(began), 0), r.rt.killed)
}

// killedForLiveness is the container's exit as its status tells it, after
// killUnhealthy: the kubelet's words and the probe's failure.
func killedForLiveness(why string) string {
	return "failed liveness probe and was restarted (" + why + ")"
}
