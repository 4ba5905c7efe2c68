package autoscaler

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/knitops/knit/api/autoscaling"
)

// Options configures Simulate like a revision and a cluster configure the
// live autoscaler.
type Options struct {
	// Annotations are the revision's autoscaling.knative.dev/* annotations.
	Annotations map[string]string
	// Config holds config-autoscaler keys; unset keys keep Knative's defaults.
	Config map[string]string
	// ContainerConcurrency is the revision's containerConcurrency (0: unlimited).
	ContainerConcurrency int64
	// PodStartDelay is how long a requested pod takes to become ready.
	PodStartDelay time.Duration
}

// simulationStart is the simulated clock's second 0. Any instant works; a
// fixed one keeps runs identical, and an even Unix second keeps the ticks
// aligned with the 2s slots of the scale-down delay as in a live cluster.
var simulationStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Simulate replays a trace (CSV `second,concurrency,rps`, one row per second
// from 0) through exactly the calls the live autoscaler makes — Reconcile
// when the revision is created at second 0, Record every second, Scale and
// Reconcile every tick — against simulated pods and a simulated
// ServerlessService, and writes `second,desired_pods,ready_pods,panic` for
// every tick. As in Knative, the first tick comes a tick interval (2s) after
// the decider starts with the revision, so the first row is second 2. It lets
// users see what Knative's algorithm would do with their load before they
// deploy; the output is deterministic.
func Simulate(r io.Reader, opts Options, w io.Writer) error {
	spec, tick, err := opts.resolve()
	if err != nil {
		return err
	}
	samples, err := readTrace(r)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "second,desired_pods,ready_pods,panic")
	sim := newSimulation(spec, opts.PodStartDelay)
	for _, s := range samples {
		now := simulationStart.Add(time.Duration(s.second) * time.Second)
		sim.decider.Record(now, s.concurrency, s.rps)
		if s.second == 0 || s.second%tick != 0 {
			continue // not a tick: the first is a tick interval after second 0
		}
		desired, ready, panicking := sim.tick(now)
		fmt.Fprintf(bw, "%d,%d,%d,%d\n", s.second, desired, ready, boolDigit(panicking))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing simulation: %w", err)
	}
	return nil
}

// resolve validates the options and returns the spec and the tick in seconds.
// Unknown keys are errors here, unlike in a ConfigMap, since a typo would
// silently simulate something else.
func (o Options) resolve() (Spec, int64, error) {
	var errs []error
	for key := range o.Config {
		if !slices.Contains(ConfigKeys(), key) {
			errs = append(errs, fmt.Errorf("unknown config-autoscaler key %q", key))
		}
	}
	for key := range o.Annotations {
		if !autoscaling.IsKnown(key) {
			errs = append(errs, fmt.Errorf("unknown autoscaling annotation %q", key))
		}
	}
	if o.PodStartDelay < 0 {
		errs = append(errs, fmt.Errorf("pod start delay %v must not be negative", o.PodStartDelay))
	}
	if err := errors.Join(errs...); err != nil {
		return Spec{}, 0, err
	}
	cfg, err := NewConfigFromMap(o.Config)
	if err != nil {
		return Spec{}, 0, err
	}
	spec, err := NewSpec(cfg, o.Annotations, o.ContainerConcurrency)
	if err != nil {
		return Spec{}, 0, err
	}
	tick := int64(cfg.TickInterval / time.Second)
	if tick < 1 || cfg.TickInterval%time.Second != 0 {
		return Spec{}, 0, fmt.Errorf("tick interval %v must be whole seconds", cfg.TickInterval)
	}
	return spec, tick, nil
}

func boolDigit(b bool) int {
	if b {
		return 1
	}
	return 0
}
