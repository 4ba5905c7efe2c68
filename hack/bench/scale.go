package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/api"
	"github.com/knitops/knit/internal/knitbuild"
)

// scaleOptions size the scale part (make bench-scale).
type scaleOptions struct {
	services int           // Services applied at once, each starting at zero
	warm     int           // Services applied at once at initial scale 1
	repo     int           // Services in the one pushed repository
	idle     time.Duration // how long idle usage is measured
}

// The scale part's namespaces.
const (
	zeroNamespace = "scale"
	warmNamespace = "warm"
)

// Time limits of the scale part; none is reached when things work.
const (
	applyTimeout  = 15 * time.Minute
	kubectlLimit  = 10 * time.Minute
	toZeroTimeout = 2 * time.Minute
	resyncTimeout = 10 * time.Minute
)

// scaleAutoscaler is config-autoscaler for the scale part: short windows,
// so the warm fleet reaches zero soon, and initial-scale 0 allowed.
var scaleAutoscaler = map[string]string{
	"stable-window": "6s", "scale-to-zero-grace-period": "4s", "allow-zero-initial-scale": "true",
}

// scaleResult is everything the scale part measured.
type scaleResult struct {
	opts     scaleOptions
	devStart time.Duration
	// apply is the fleet at zero: kubectl apply's own time, and apply →
	// first and all Services Ready.
	applyCmd time.Duration
	apply    progress
	// idle is every process of knit dev over opts.idle, all Services at
	// zero.
	idle []procUsage
	warm warmResult
	// restart: SIGTERM → exit, start → banner, start → every controller
	// reconciled every object and went idle.
	stop, restartBanner, resync time.Duration
	resynced                    map[string]int
	// push is the repository's first push → all its Services Ready, and
	// an update of all of them → all Ready at the new commit.
	firstPush, updatePush progress
}

// warmResult is the fleet at initial scale 1.
type warmResult struct {
	applyCmd      time.Duration
	ready         progress
	peakReplicas  int      // replica processes (apps and queue-proxies) at once, at most
	queues        int      // knit-queue processes when their memory was read
	queueMem      memUsage // their memory, summed, at the peak
	queuePSS      uint64   // their proportional set size, summed
	toZero        time.Duration
	controlPlane  []procUsage // knit dev's own processes over the warm-up
	warmupElapsed time.Duration
}

// measureScale runs the scale part: knit dev built from this tree with a
// thousand Services, the scale knit dev's targets are set for.
func measureScale(ctx context.Context, root, binDir string, so scaleOptions, out io.Writer) (*scaleResult, error) {
	if err := checkTools(binDir); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "knit-bench-scale-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	knit, err := knitbuild.Build(ctx, root, tmp)
	if err != nil {
		return nil, err
	}
	res := &scaleResult{opts: so}
	began := time.Now()
	d, err := startDev(ctx, knit, root, binDir, tmp, true)
	if err != nil {
		return nil, err
	}
	defer func() { d.stop() }()
	res.devStart = time.Since(began)
	fmt.Fprintf(out, "scale: knit dev up in %s\n", res.devStart.Round(time.Millisecond))

	s := &scaleRun{dev: d, out: out, tmp: tmp, root: root}
	if err := s.prepare(ctx); err != nil {
		return nil, d.explain(err)
	}
	defer func() { s.watch.stop() }()
	steps := []struct {
		name string
		run  func(context.Context, *scaleResult) error
	}{
		{"apply at zero", s.applyAtZero},
		{"idle at zero", s.measureIdle},
		{"apply at initial scale 1", s.applyWarm},
		{"restart", s.restartDev},
		{"push", s.pushRepo},
	}
	for _, step := range steps {
		if err := step.run(ctx, res); err != nil {
			return nil, s.dev.explain(fmt.Errorf("%s: %w", step.name, err))
		}
	}
	d = s.dev // the restarted one, for the deferred stop
	return res, nil
}

// scaleRun is the state the scale part's steps share.
type scaleRun struct {
	dev       *knitDev
	c         client.Client
	watch     *serviceWatch
	out       io.Writer
	tmp, root string
}

// prepare configures the autoscaler, creates the namespaces and starts
// watching their Services.
func (s *scaleRun) prepare(ctx context.Context) error {
	c, err := s.dev.client()
	if err != nil {
		return err
	}
	s.c = c
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "knit-system", Name: "config-autoscaler"}, Data: scaleAutoscaler}
	if err := c.Create(ctx, cm); apierrors.IsAlreadyExists(err) {
		err = c.Update(ctx, cm)
	} else if err != nil {
		return fmt.Errorf("config-autoscaler: %w", err)
	}
	for _, ns := range []string{zeroNamespace, warmNamespace} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	cfg, err := s.dev.restConfig()
	if err != nil {
		return err
	}
	scheme, err := api.NewScheme()
	if err != nil {
		return err
	}
	s.watch, err = watchServices(ctx, cfg, scheme, zeroNamespace, warmNamespace, repoNamespace)
	return err
}

// apply writes f's Services to a file and runs `kubectl apply -f` on it,
// as a user would; it returns how long kubectl took.
func (s *scaleRun) apply(ctx context.Context, f fleet) (time.Duration, error) {
	file := filepath.Join(s.tmp, f.namespace+".yaml")
	if err := writeFile(file, f.manifests("scale")); err != nil {
		return 0, err
	}
	began := time.Now()
	if out, err := s.dev.kubectlWithin(ctx, kubectlLimit, "apply", "-f", file); err != nil {
		return 0, fmt.Errorf("kubectl apply -f %s: %v\n%s", file, err, tail(string(out), 10))
	}
	return time.Since(began), nil
}

// applyAndWait applies f and waits until all its Services are Ready,
// watching from before kubectl starts so the first Ready is seen even
// while kubectl still writes the rest.
func (s *scaleRun) applyAndWait(ctx context.Context, f fleet) (took time.Duration, p progress, err error) {
	began := time.Now()
	waited := make(chan error, 1)
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		var err error
		p, err = s.watch.waitDone(waitCtx, began, f.namespace, f.count, applyTimeout, readyAt, s.out)
		waited <- err
	}()
	if took, err = s.apply(ctx, f); err != nil {
		cancel()
		<-waited
		return 0, p, err
	}
	fmt.Fprintf(s.out, "scale: kubectl apply of %d Services took %s\n", f.count, took.Round(time.Millisecond))
	err = <-waited
	return took, p, err
}

func (s *scaleRun) applyAtZero(ctx context.Context, res *scaleResult) error {
	f := fleet{namespace: zeroNamespace, prefix: "s", count: res.opts.services, initialScale: 0, image: scaleImage}
	var err error
	res.applyCmd, res.apply, err = s.applyAndWait(ctx, f)
	if err == nil {
		fmt.Fprintf(s.out, "scale: %d Services Ready %s after apply\n", f.count, res.apply.all.Round(time.Millisecond))
	}
	return err
}
