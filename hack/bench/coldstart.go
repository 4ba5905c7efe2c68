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
	"strconv"
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

// coldRun is one cold start and one start of the bare app.
type coldRun struct {
	// app is the app binary's own start: exec until the first byte of
	// its first answer.
	app time.Duration
	// ttfb is a request to the Revision at zero, through knit dev's
	// ingress, from being written to the first byte of the answer.
	ttfb time.Duration
}

// coldResult is the cold-start part of the report.
type coldResult struct {
	runs      []coldRun
	devStart  time.Duration // knit dev until its banner
	firstUp   time.Duration // apply until the first answer, build included
	knitBuild time.Duration
}

// measureColdStart builds knit from the tree, runs `knit dev` in a
// temporary state dir on free loopback ports, deploys helloworld and
// times runs cold starts, each after the Revision reached zero and
// beside a start of the same app binary alone.
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
	began = time.Now()
	if out, err := d.kubectl(ctx, "apply", "-f", helloManifest); err != nil {
		return nil, d.explain(fmt.Errorf("kubectl apply: %v\n%s", err, out))
	}
	if err := waitAnswer(ctx, d.httpAddr, firstServeTimeout); err != nil {
		return nil, d.explain(fmt.Errorf("helloworld never answered: %w", err))
	}
	res.firstUp = time.Since(began)
	bin, err := appBinary(ctx, root, d.stateDir, tmp)
	if err != nil {
		return nil, err
	}

	for i := range runs {
		if err := d.waitZero(ctx, c); err != nil {
			return nil, d.explain(err)
		}
		if err := sleep(ctx, settle); err != nil {
			return nil, err
		}
		var run coldRun
		if run.app, err = appStart(ctx, bin); err != nil {
			return nil, fmt.Errorf("starting %s alone: %w", bin, err)
		}
		if err := sleep(ctx, settle); err != nil {
			return nil, err
		}
		if run.ttfb, err = coldRequest(d.httpAddr); err != nil {
			return nil, d.explain(fmt.Errorf("cold start %d: %w", i+1, err))
		}
		fmt.Fprintf(progress, "cold start %d/%d: %s to first byte; the app alone starts in %s\n",
			i+1, runs, run.ttfb.Round(10*time.Microsecond), run.app.Round(10*time.Microsecond))
		res.runs = append(res.runs, run)
	}
	return res, nil
}

// waitZero waits until the autoscaler decided zero, no replica is ready,
// and no replica process is left (a scaled-down replica drains first).
func (d *knitDev) waitZero(ctx context.Context, c client.Client) error {
	deadline := time.Now().Add(zeroTimeout)
	last := "nothing read yet"
	for time.Now().Before(deadline) {
		pa := &autoscalingv1alpha1.PodAutoscaler{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: helloPA}, pa); err != nil {
			last = err.Error()
		} else {
			desired, actual := ptr.Deref(pa.Status.DesiredScale, -1), ptr.Deref(pa.Status.ActualScale, -1)
			procs := processesUnder(filepath.Join(d.stateDir, "builds"))
			last = fmt.Sprintf("desired %d, actual %d, %d app processes", desired, actual, procs)
			if desired == 0 && actual == 0 && procs == 0 {
				return nil
			}
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s not at zero within %s: %s", helloPA, zeroTimeout, last)
}

// processesUnder counts processes whose executable lies under dir.
func processesUnder(dir string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && strings.HasPrefix(exe, dir+"/") {
			n++
		}
	}
	return n
}

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
// the first byte of its first answer, polling every 200µs.
func appStart(ctx context.Context, bin string) (time.Duration, error) {
	addr, err := freeAddr()
	if err != nil {
		return 0, err
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin)
	cmd.Env = []string{"PORT=" + port, "TARGET=World"}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	deadline := start.Add(appStartTimeout)
	for {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			ttfb, err := firstByte(conn, start, deadline)
			if err != nil {
				return 0, err
			}
			return ttfb, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no answer on %s within %s: %w", addr, appStartTimeout, err)
		}
		if err := sleep(ctx, 200*time.Microsecond); err != nil {
			return 0, err
		}
	}
}

// coldRequest sends GET / for helloHost to the ingress over a connection
// opened beforehand and times the request's write to the first byte of
// the answer, which must be helloworld's 200.
func coldRequest(ingress string) (time.Duration, error) {
	conn, err := net.Dial("tcp", ingress)
	if err != nil {
		return 0, err
	}
	return firstByte(conn, time.Time{}, time.Now().Add(requestTimeout))
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

// waitAnswer polls knit dev's ingress until helloworld answers.
func waitAnswer(ctx context.Context, ingress string, timeout time.Duration) error {
	return waitAnswerFrom(ctx, ingress, helloHost, timeout)
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
