package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/api"
	"github.com/knitops/knit/local/dev"
)

// checkTools fails unless binDir holds what knit dev and the bench run.
func checkTools(binDir string) error {
	for _, tool := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if _, err := os.Stat(filepath.Join(binDir, tool)); err != nil {
			return fmt.Errorf("%s is missing from %s: run `make tools` first", tool, binDir)
		}
	}
	return nil
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// knitDev is one running `knit dev`.
type knitDev struct {
	devSpec
	cmd     *exec.Cmd
	log     *os.File
	exited  chan error
	drained chan struct{}
}

// devSpec is how a knit dev is started: a restart starts another with the
// same state, addresses and flags.
type devSpec struct {
	knit, root, binDir string
	stateDir, logPath  string
	httpAddr, gitAddr  string
	httpsAddr          string
	metricsAddr        string   // empty: no --metrics-addr
	extra              []string // further flags of knit dev
}

// startDev starts knit dev with its state in tmp, on free loopback ports,
// and waits for its banner. withMetrics serves its /metrics too; extra
// are further flags of knit dev.
func startDev(ctx context.Context, knit, root, binDir, tmp string, withMetrics bool, extra ...string) (*knitDev, error) {
	s := devSpec{knit: knit, root: root, binDir: binDir, stateDir: filepath.Join(tmp, "state"), logPath: filepath.Join(tmp, "knit-dev.log"), extra: extra}
	addrs := []*string{&s.httpAddr, &s.httpsAddr, &s.gitAddr}
	if withMetrics {
		addrs = append(addrs, &s.metricsAddr)
	}
	for _, a := range addrs {
		var err error
		if *a, err = freeAddr(); err != nil {
			return nil, err
		}
	}
	return s.start(ctx)
}

// restart stops d and starts another knit dev like it; d is stopped
// whatever happens.
func (d *knitDev) restart(ctx context.Context) (*knitDev, error) {
	d.stop()
	return d.start(ctx)
}

// start runs knit dev as s says and waits for its banner; its output
// goes to the end of s.logPath.
func (s devSpec) start(ctx context.Context) (*knitDev, error) {
	d := &knitDev{devSpec: s, exited: make(chan error, 1), drained: make(chan struct{})}
	var err error
	if d.log, err = os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		return nil, err
	}
	args := []string{"dev", "--state-dir", s.stateDir, "--bin-dir", s.binDir, "--http-addr", s.httpAddr, "--https-addr", s.httpsAddr, "--git-addr", s.gitAddr}
	if s.metricsAddr != "" {
		args = append(args, "--metrics-addr", s.metricsAddr)
	}
	args = append(args, s.extra...)
	d.cmd = exec.Command(s.knit, args...)
	d.cmd.Dir = s.root
	d.cmd.Stderr = d.log
	d.cmd.SysProcAttr = devSysProcAttr()
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan struct{})
	go func() {
		defer close(d.drained)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(d.log, sc.Text())
			if strings.HasPrefix(sc.Text(), dev.ReadyLine) {
				close(ready)
			}
		}
	}()
	go func() { d.exited <- d.cmd.Wait() }()
	select {
	case <-ready:
		return d, nil
	case err := <-d.exited:
		d.exited <- err
		d.stop()
		return nil, d.explain(fmt.Errorf("knit dev exited before it was ready: %v", err))
	case <-time.After(devReadyTimeout):
		d.stop()
		return nil, d.explain(fmt.Errorf("knit dev not ready within %s", devReadyTimeout))
	case <-ctx.Done():
		d.stop()
		return nil, ctx.Err()
	}
}

// stop sends SIGTERM, waits for knit dev to stop its replicas and
// control plane, and kills it after devStopTimeout; idempotent.
func (d *knitDev) stop() {
	if d.cmd.Process == nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.exited:
		d.exited <- err
	case <-time.After(devStopTimeout):
		_ = d.cmd.Process.Kill()
		d.exited <- <-d.exited
	}
	<-d.drained
	d.log.Close()
}

// explain adds the end of knit dev's log to err.
func (d *knitDev) explain(err error) error {
	data, _ := os.ReadFile(d.logPath)
	return fmt.Errorf("%w\n--- last lines of knit dev's log:\n%s", err, tail(string(data), 30))
}

// tree is knit dev's process and every process below it.
func (d *knitDev) tree() []proc { return processTree(d.cmd.Process.Pid) }

func (d *knitDev) kubeconfig() string { return filepath.Join(d.stateDir, "kubeconfig") }

func (d *knitDev) restConfig() (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", d.kubeconfig())
}

func (d *knitDev) client() (client.Client, error) { return knitClient(d.kubeconfig()) }

// knitClient is an API client for knit's objects (Knative's, knit's own,
// Kubernetes') through kubeconfig.
func knitClient(kubeconfig string) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	scheme, err := api.NewScheme()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

func (d *knitDev) kubectl(ctx context.Context, args ...string) ([]byte, error) {
	return d.kubectlWithin(ctx, time.Minute, args...)
}

func (d *knitDev) kubectlWithin(ctx context.Context, timeout time.Duration, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(d.binDir, "kubectl"),
		append([]string{"--kubeconfig", filepath.Join(d.stateDir, "kubeconfig")}, args...)...)
	cmd.Dir = d.root
	return cmd.CombinedOutput()
}
