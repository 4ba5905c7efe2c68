package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// settleIdle is how long the idle measurement waits after the last
// replica is gone and every controller is idle, for stragglers (a status
// write, a lease renewal) to pass.
const settleIdle = 5 * time.Second

// metricsURL is knit dev's /metrics.
func (s *scaleRun) metricsURL() string { return "http://" + s.dev.metricsAddr + "/metrics" }

// waitQuiet waits until no replica process is left and every controller
// is idle.
func (s *scaleRun) waitQuiet(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	began := time.Now()
	for s.dev.replicaCount(s.dev.tree()) > 0 {
		if time.Since(began) > timeout {
			return 0, fmt.Errorf("replicas still running after %s: %s", timeout, s.dev.describeReplicas(s.dev.tree()))
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return 0, err
		}
	}
	atZero := time.Since(began)
	if _, err := waitResync(ctx, s.metricsURL(), nil, time.Now(), timeout); err != nil {
		return 0, err
	}
	return atZero, nil
}

func (s *scaleRun) measureIdle(ctx context.Context, res *scaleResult) error {
	if _, err := s.waitQuiet(ctx, toZeroTimeout); err != nil {
		return err
	}
	if err := sleep(ctx, settleIdle); err != nil {
		return err
	}
	var err error
	res.idle, err = measureUsage(ctx, s.dev.controlPlane(s.dev.tree()), res.opts.idle)
	if err == nil {
		fmt.Fprintf(s.out, "scale: idle at zero: %s\n", describeUsage(res.idle, res.opts.idle))
	}
	return err
}

// describeUsage is a progress line of usage over window.
func describeUsage(usage []procUsage, window time.Duration) string {
	var parts []string
	for _, u := range usage {
		parts = append(parts, fmt.Sprintf("%s %.1f%% of a core, %.0f MiB", u.name, 100*u.share(window), mib(u.mem.rss)))
	}
	return strings.Join(parts, "; ")
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// applyWarm applies the warm fleet (initial scale 1: a replica each),
// watching the replica processes while it comes up, then waits for it to
// scale to zero.
func (s *scaleRun) applyWarm(ctx context.Context, res *scaleResult) error {
	f := fleet{namespace: warmNamespace, prefix: "w", count: res.opts.warm, initialScale: 1, image: scaleImage}
	w := &res.warm
	cpu, err := snapshotCPU(s.dev.controlPlane(s.dev.tree()))
	if err != nil {
		return err
	}
	sampleCtx, stopSampling := context.WithCancel(ctx)
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() {
		defer sampled.Done()
		s.sampleReplicas(sampleCtx, w)
	}()
	began := time.Now()
	w.applyCmd, w.ready, err = s.applyAndWait(ctx, f)
	stopSampling()
	sampled.Wait()
	if err != nil {
		return err
	}
	w.warmupElapsed = time.Since(began)
	if w.controlPlane, err = cpu.since(); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "scale: %d Services at initial scale 1 Ready %s after apply; %d replica processes at the peak\n",
		f.count, w.ready.all.Round(time.Millisecond), w.peakReplicas)
	zeroFrom := time.Now()
	if _, err := s.waitQuiet(ctx, toZeroTimeout); err != nil {
		return err
	}
	w.toZero = time.Since(zeroFrom)
	return nil
}

// sampleReplicas records the most replica processes seen at once, and
// the knit-queue processes' memory then, every 500ms until ctx ends.
func (s *scaleRun) sampleReplicas(ctx context.Context, w *warmResult) {
	for ctx.Err() == nil {
		tree := s.dev.tree()
		if n := s.dev.replicaCount(tree); n > w.peakReplicas {
			w.peakReplicas = n
			w.queueMem, w.queuePSS, w.queues = memoryOf(tree, "knit-queue")
		}
		_ = sleep(ctx, 500*time.Millisecond)
	}
}

// restartDev stops knit dev with SIGTERM and starts it again on the same
// state, then waits for the resync: every controller reconciled every
// object it owns once and went idle.
func (s *scaleRun) restartDev(ctx context.Context, res *scaleResult) error {
	want, err := s.resyncWant(ctx)
	if err != nil {
		return err
	}
	res.resynced = want
	stopping := time.Now()
	s.dev.stop()
	res.stop = time.Since(stopping)
	began := time.Now()
	d, err := s.dev.start(ctx)
	if err != nil {
		return err
	}
	s.dev = d
	res.restartBanner = time.Since(began)
	if res.resync, err = waitResync(ctx, s.metricsURL(), want, began, resyncTimeout); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "scale: knit dev stopped in %s, restarted in %s, resynced %s after its start\n",
		res.stop.Round(time.Millisecond), res.restartBanner.Round(time.Millisecond), res.resync.Round(time.Millisecond))
	for _, ns := range []string{zeroNamespace, warmNamespace} {
		if n, of, err := s.watch.count(ctx, ns, readyAt); err != nil || n != of {
			return fmt.Errorf("after the restart %d of %d Services of %s are Ready (%v)", n, of, ns, err)
		}
	}
	return nil
}

// resyncWant is how many objects each controller must reconcile for a
// full resync: the objects of the kind it is for.
func (s *scaleRun) resyncWant(ctx context.Context) (map[string]int, error) {
	kinds := map[string]client.ObjectList{
		"service":           &servingv1.ServiceList{},
		"configuration":     &servingv1.ConfigurationList{},
		"revision":          &servingv1.RevisionList{},
		"route":             &servingv1.RouteList{},
		"serverlessservice": &networkingv1alpha1.ServerlessServiceList{},
		"podautoscaler":     &autoscalingv1alpha1.PodAutoscalerList{},
	}
	want := map[string]int{}
	for name, list := range kinds {
		if err := s.c.List(ctx, list); err != nil {
			return nil, fmt.Errorf("list for %s: %w", name, err)
		}
		want[name] = meta.LenList(list)
	}
	return want, nil
}

// pushRepo pushes a repository holding opts.repo Services to knit dev's
// Git server, then a commit changing all of them.
func (s *scaleRun) pushRepo(ctx context.Context, res *scaleResult) error {
	token, err := os.ReadFile(filepath.Join(s.dev.stateDir, "git-token"))
	if err != nil {
		return fmt.Errorf("knit dev's git token: %w", err)
	}
	f := fleet{prefix: "r", count: res.opts.repo, initialScale: 0, image: scaleRepoImage}
	repo, err := newFleetRepo(ctx, s.root, s.tmp, s.dev.gitAddr, strings.TrimSpace(string(token)), f)
	if err != nil {
		return err
	}
	for i, p := range []*progress{&res.firstPush, &res.updatePush} {
		if i > 0 {
			if _, err := repo.commit(ctx, "Git again"); err != nil {
				return err
			}
		}
		sha, err := repo.output(ctx, "rev-parse", "HEAD")
		if err != nil {
			return err
		}
		began := time.Now()
		if err := repo.push(ctx); err != nil {
			return err
		}
		if *p, err = s.watch.waitDone(ctx, began, repoNamespace, f.count, applyTimeout, serves(strings.TrimSpace(sha)), s.out); err != nil {
			return err
		}
		fmt.Fprintf(s.out, "scale: push %d: %d Services Ready at %.7s %s after the push\n", i+1, f.count, sha, p.all.Round(time.Millisecond))
	}
	return nil
}
