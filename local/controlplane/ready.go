package controlplane

import (
	"context"
	"fmt"
	"time"
)

// pollInterval is how often readiness is probed; both servers answer
// within seconds, so a short interval keeps startup tight.
const pollInterval = 100 * time.Millisecond

// waitReady probes until the child answers, fails at once with its log
// tail if it exits, and gives up when ctx ends.
func waitReady(ctx context.Context, p *process, probe func(context.Context) error) error {
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		if p.exited() {
			return p.exitError()
		}
		err := probe(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return p.exitError()
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last probe: %v); see %s", p.name, ctx.Err(), err, p.logPath)
		case <-ticker.C:
		}
	}
}
