package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	"github.com/knitops/knit/internal/knitbuild"
)

// The cold-start subject: examples/helloworld (min-scale 0) with
// Knative's autoscaler windows shortened so it reaches zero a few seconds
// after its last request.
const (
	helloManifest = "examples/helloworld/service.yaml"
	helloHost     = "hello.default.localhost"
	helloBody     = "Hello World!\n"
	helloBinary   = "helloworld"
	helloPA       = "hello-00001"
	helloPkg      = "./examples/helloworld"
)

var shortAutoscaler = map[string]string{"stable-window": "6s", "scale-to-zero-grace-period": "4s"}

// Time limits of the cold-start part; none is reached when things work.
const (
	devReadyTimeout   = 3 * time.Minute
	firstServeTimeout = 3 * time.Minute
	zeroTimeout       = time.Minute
	requestTimeout    = 30 * time.Second
	appStartTimeout   = 10 * time.Second
	devStopTimeout    = time.Minute
	// settle lets knit dev finish reacting to the scale-down before a
	// measurement starts.
	settle = 500 * time.Millisecond
)

// coldRun is one cold start of a Revision and one start of its app
// alone.
type coldRun struct {
	// app is the app binary's own start: exec until the first byte of
	// its first answer.
	app time.Duration
	// runc is the app image's start with runc alone (runcAlone), exec
	// of runc until the first byte; 0 for the ko:// Revision.
	runc time.Duration
	// ttfb is a request to the Revision at zero, through knit dev's
	// ingress, from being written to the first byte of the answer.
	ttfb time.Duration
}

// coldResult is the cold-start part of the report.
type coldResult struct {
	runs      []coldRun     // the ko:// Revision
	devStart  time.Duration // knit dev until its banner
	firstUp   time.Duration // apply until the first answer, build included
	knitBuild time.Duration
	// image are the image Revision's runs, taking turns with runs;
	// imageSkipped says why there are none.
	image        []coldRun
	imageSkipped string
	imageFirstUp time.Duration // apply until its first answer, pull included
	imageSize    int64         // its one compressed layer
}

// coldSubject is a Revision whose cold starts are timed: alone starts
// its app without knit, and runs collects the runs.
type coldSubject struct {
	label, host string
	alone       func(context.Context) (coldRun, error)
	runs        *[]coldRun
}

// measureColdStart builds knit from the tree, runs `knit dev` in a
// temporary state dir on free loopback ports, deploys helloworld, as a
// ko:// Service and (as root with runc) as an image Service, and times
// runs cold starts of each, each after every Revision reached zero and
// beside a start of the same app binary alone. The two take turns, in
// alternating order, so a slow moment of a shared machine hits both.
func measureColdStart(ctx context.Context, root, binDir string, runs int, progress io.Writer) (*coldResult, error) {
	if err := checkTools(binDir); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "knit-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	res := &coldResult{}
	began := time.Now()

	knit, err := knitbuild.Build(ctx, root, tmp)
	if err != nil {
		return nil, err
	}
	res.knitBuild = time.Since(began)

	began = time.Now()
	d, err := startDev(ctx, knit, root, binDir, tmp, false)
	if err != nil {
		return nil, err
	}
	defer d.stop()
	res.devStart = time.Since(began)
	fmt.Fprintf(progress, "cold start: knit built in %s, knit dev up in %s\n", res.knitBuild.Round(time.Millisecond), res.devStart.Round(time.Millisecond))

	c, err := d.client()
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "knit-system", Name: "config-autoscaler"}, Data: shortAutoscaler}
	if err := c.Create(ctx, cm); apierrors.IsAlreadyExists(err) {
		err = c.Update(ctx, cm)
	} else if err != nil {
		return nil, d.explain(fmt.Errorf("config-autoscaler: %w", err))
	}
	if res.firstUp, err = d.applyAndWait(ctx, helloManifest, helloHost); err != nil {
		return nil, err
	}
	bin, err := appBinary(ctx, root, d.stateDir, tmp)
	if err != nil {
		return nil, err
	}
	subjects := []coldSubject{{label: "ko://", host: helloHost, runs: &res.runs, alone: func(ctx context.Context) (coldRun, error) {
		app, err := appStart(ctx, bin)
		return coldRun{app: app}, err
	}}}
	pas := []string{helloPA}

	if res.imageSkipped = imageSkipReason(); res.imageSkipped == "" {
		img, err := prepareImage(ctx, root, tmp)
		if err != nil {
			return nil, fmt.Errorf("image: %w", err)
		}
		defer img.close()
		res.imageSize = img.size
		if res.imageFirstUp, err = d.applyAndWait(ctx, img.manifest, imageHost); err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "cold start: %s first answered %s after kubectl apply\n", img.ref, res.imageFirstUp.Round(time.Millisecond))
		subjects = append(subjects, coldSubject{label: "image", host: imageHost, runs: &res.image, alone: img.alone})
		pas = append(pas, imagePA)
	} else {
		fmt.Fprintf(progress, "cold start: the image Revision is skipped: %s\n", res.imageSkipped)
	}

	for i := range runs {
		for _, s := range turnOrder(subjects, i) {
			if err := d.waitZero(ctx, c, pas); err != nil {
				return nil, d.explain(err)
			}
			if err := sleep(ctx, settle); err != nil {
				return nil, err
			}
			run, err := s.alone(ctx)
			if err != nil {
				return nil, fmt.Errorf("%s app alone: %w", s.label, err)
			}
			if err := sleep(ctx, settle); err != nil {
				return nil, err
			}
			if run.ttfb, err = coldRequest(d.httpAddr, s.host); err != nil {
				return nil, d.explain(fmt.Errorf("%s cold start %d: %w", s.label, i+1, err))
			}
			fmt.Fprintf(progress, "cold start %d/%d, %s: %s to first byte; the app alone starts in %s%s\n",
				i+1, runs, s.label, run.ttfb.Round(10*time.Microsecond), run.app.Round(10*time.Microsecond), runcNote(run))
			*s.runs = append(*s.runs, run)
		}
	}
	return res, nil
}

// runcNote is a progress line's mention of runc alone, when timed.
func runcNote(run coldRun) string {
	if run.runc == 0 {
		return ""
	}
	return fmt.Sprintf(", in runc alone in %s", run.runc.Round(10*time.Microsecond))
}

// applyAndWait applies manifest and waits for host's first answer; it
// returns the time between the two.
func (d *knitDev) applyAndWait(ctx context.Context, manifest, host string) (time.Duration, error) {
	began := time.Now()
	if out, err := d.kubectl(ctx, "apply", "-f", manifest); err != nil {
		return 0, d.explain(fmt.Errorf("kubectl apply -f %s: %v\n%s", manifest, err, out))
	}
	if err := waitAnswerFrom(ctx, d.httpAddr, host, firstServeTimeout); err != nil {
		return 0, d.explain(fmt.Errorf("%s never answered: %w", host, err))
	}
	return time.Since(began), nil
}

// alone starts the image's app binary alone, then its files with runc
// alone.
func (s *imageSubject) alone(ctx context.Context) (coldRun, error) {
	var run coldRun
	var err error
	if run.app, err = appStart(ctx, s.bin); err != nil {
		return run, err
	}
	if err := sleep(ctx, settle); err != nil {
		return run, err
	}
	if run.runc, err = s.runc.start(ctx); err != nil {
		return run, fmt.Errorf("runc alone: %w", err)
	}
	return run, nil
}

// turnOrder is subjects in the order of round i: each round starts one
// further along, so none is always first after the others' scale-down.
func turnOrder[T any](subjects []T, i int) []T {
	if len(subjects) == 0 {
		return nil
	}
	k := i % len(subjects)
	return append(slices.Clone(subjects[k:]), subjects[:k]...)
}

// waitZero waits until the autoscaler decided zero for every
// PodAutoscaler of pas, none has a ready replica, and nothing of a
// replica is left: no process of a ko:// app (a scaled-down replica
// drains first), no container run of an image (bundlesLeft).
func (d *knitDev) waitZero(ctx context.Context, c client.Client, pas []string) error {
	deadline := time.Now().Add(zeroTimeout)
	last := "nothing read yet"
	for time.Now().Before(deadline) {
		var parts []string
		zero := true
		for _, name := range pas {
			pa := &autoscalingv1alpha1.PodAutoscaler{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, pa); err != nil {
				parts, zero = append(parts, fmt.Sprintf("%s: %v", name, err)), false
				continue
			}
			desired, actual := ptr.Deref(pa.Status.DesiredScale, -1), ptr.Deref(pa.Status.ActualScale, -1)
			parts = append(parts, fmt.Sprintf("%s desired %d, actual %d", name, desired, actual))
			zero = zero && desired == 0 && actual == 0
		}
		procs, bundles := d.replicaProcesses(), bundlesLeft(d.stateDir)
		parts = append(parts, fmt.Sprintf("%d replica processes, %d container bundles", procs, bundles))
		if zero && procs == 0 && bundles == 0 {
			return nil
		}
		last = strings.Join(parts, "; ")
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("not at zero within %s: %s", zeroTimeout, last)
}

// replicaProcesses counts knit dev's descendants that belong to a
// replica: the app, its queue-proxy, runc. Their executables' paths do
// not tell (a ko:// app runs as /ko-app/<name> in a view of its own), so
// their names do.
func (d *knitDev) replicaProcesses() int {
	n := 0
	for _, p := range d.tree() {
		if replicaCommands[p.name] {
			n++
		}
	}
	return n
}

// replicaCommands are the command names of a replica's processes.
var replicaCommands = map[string]bool{helloBinary: true, "knit-queue": true, "runc": true}

// appBinary is the helloworld binary knit dev built (and runs), else one
// built here the same way.
func appBinary(ctx context.Context, root, stateDir, tmp string) (string, error) {
	matches, _ := filepath.Glob(filepath.Join(stateDir, "builds", "*", helloBinary))
	if len(matches) == 1 {
		return matches[0], nil
	}
	bin := filepath.Join(tmp, helloBinary)
	if out, err := goCmd(ctx, root, "build", "-trimpath", "-o", bin, helloPkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", helloPkg, err, out)
	}
	return bin, nil
}

// appStart runs bin on a free loopback port and times it from exec to
// the first byte of its first answer.
func appStart(ctx context.Context, bin string) (time.Duration, error) {
	addr, err := freeAddr()
	if err != nil {
		return 0, err
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin)
	cmd.Env = []string{"PORT=" + port, "TARGET=World"}
	ttfb, err := timeFirstAnswer(ctx, cmd, addr)
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	return ttfb, err
}

// timeFirstAnswer starts cmd, which serves helloworld on addr, and times
// it from exec to the first byte of its first answer, polling every
// 200µs. The caller stops cmd.
func timeFirstAnswer(ctx context.Context, cmd *exec.Cmd, addr string) (time.Duration, error) {
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	deadline := start.Add(appStartTimeout)
	for {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			return firstByte(conn, start, deadline)
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no answer on %s within %s: %w", addr, appStartTimeout, err)
		}
		if err := sleep(ctx, 200*time.Microsecond); err != nil {
			return 0, err
		}
	}
}

// coldRequest sends GET / for host to the ingress over a connection
// opened beforehand and times the request's write to the first byte of
// the answer, which must be helloworld's 200.
func coldRequest(ingress, host string) (time.Duration, error) {
	conn, err := net.Dial("tcp", ingress)
	if err != nil {
		return 0, err
	}
	return firstByteFrom(conn, host, helloBody, time.Time{}, time.Now().Add(requestTimeout))
}

// firstByte is firstByteFrom for knit dev's helloworld.
func firstByte(conn net.Conn, start, deadline time.Time) (time.Duration, error) {
	return firstByteFrom(conn, helloHost, helloBody, start, deadline)
}

// firstByteFrom sends GET / for host on conn, closes it, and returns the
// time from start (zero: the request's write) to the answer's first
// byte; the answer must be 200 with want as its body.
func firstByteFrom(conn net.Conn, host, want string, start, deadline time.Time) (time.Duration, error) {
	defer conn.Close()
	conn.SetDeadline(deadline)
	req, _ := http.NewRequest(http.MethodGet, "http://"+host+"/", nil)
	req.Header.Set("User-Agent", "knit-bench")
	if start.IsZero() {
		start = time.Now()
	}
	if err := req.Write(conn); err != nil {
		return 0, err
	}
	br := bufio.NewReader(conn)
	if _, err := br.Peek(1); err != nil {
		return 0, err
	}
	ttfb := time.Since(start)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return 0, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK || string(body) != want {
		return 0, fmt.Errorf("answer %s %q, want 200 %q", resp.Status, body, want)
	}
	return ttfb, nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func goCmd(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	return cmd
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// median of the durations f picks from runs.
func median[R any](runs []R, f func(R) time.Duration) time.Duration {
	if len(runs) == 0 {
		return 0
	}
	ds := make([]time.Duration, len(runs))
	for i, r := range runs {
		ds[i] = f(r)
	}
	slices.Sort(ds)
	if len(ds)%2 == 1 {
		return ds[len(ds)/2]
	}
	return (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2
}
