//go:build !unit

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/api"
	"github.com/knitops/knit/internal/knitbuild"
	"github.com/knitops/knit/local/dev"
)

// repoRoot is the module root, where bin/ and examples/ live.
var repoRoot = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Dir(wd)
}()

// binDir holds kube-apiserver, etcd and kubectl as `make tools` built them.
func binDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run the e2e tests through `make test`, which builds ./bin and exports it")
	}
	return dir
}

var (
	buildOnce sync.Once
	knitBin   string
	buildErr  error
)

// buildKnit compiles the knit binary once per test run.
func buildKnit(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "knit-e2e-bin")
		if err != nil {
			buildErr = err
			return
		}
		// knit-queue beside knit, as make build leaves them.
		knitBin, buildErr = knitbuild.Build(context.Background(), repoRoot, dir)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return knitBin
}

// knitDev is one running `knit dev` process.
type knitDev struct {
	cmd      *exec.Cmd
	stateDir string
	httpAddr string
	// httpsAddr is the ingress over TLS, with knit dev's CA for
	// *.localhost.
	httpsAddr string
	gitAddr   string // the Git server and forge webhooks
	output    *syncBuffer
	exited    chan error
	// started is when the process started, ready when its banner came.
	started, ready time.Time
}

// startKnitDev starts knit dev and waits for its banner.
func startKnitDev(t *testing.T, stateDir string) *knitDev {
	t.Helper()
	return startKnitDevOn(t, stateDir, freeAddr(t), freeAddr(t))
}

// startKnitDevOn starts knit dev with its ingress and Git server on the
// given addresses (a restart keeps them), with extra flags, and waits for
// its banner.
func startKnitDevOn(t *testing.T, stateDir, httpAddr, gitAddr string, extra ...string) *knitDev {
	t.Helper()
	d := &knitDev{stateDir: stateDir, httpAddr: httpAddr, httpsAddr: freeAddr(t), gitAddr: gitAddr, output: &syncBuffer{}, exited: make(chan error, 1)}
	d.cmd = exec.Command(buildKnit(t), append([]string{"dev",
		"--state-dir", stateDir, "--bin-dir", binDir(t),
		"--http-addr", d.httpAddr, "--https-addr", d.httpsAddr, "--git-addr", d.gitAddr}, extra...)...)
	d.cmd.Dir = repoRoot
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d.cmd.Stderr = d.output
	d.started = time.Now()
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(d.output, sc.Text())
			if strings.HasPrefix(sc.Text(), dev.ReadyLine) {
				d.ready = time.Now()
				close(ready)
			}
		}
	}()
	go func() { d.exited <- d.cmd.Wait() }()
	t.Cleanup(func() { d.stop(t) })
	select {
	case <-ready:
	case err := <-d.exited:
		d.exited <- err
		t.Fatalf("knit dev exited before it was ready: %v\n%s", err, d.output)
	case <-time.After(3 * time.Minute):
		t.Fatalf("knit dev not ready within 3m:\n%s", d.output)
	}
	return d
}

// stop sends SIGTERM and waits for a clean exit; idempotent.
func (d *knitDev) stop(t *testing.T) error {
	t.Helper()
	if d.cmd.ProcessState != nil {
		return nil
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.exited:
		d.exited <- err
		return err
	case <-time.After(time.Minute):
		_ = d.cmd.Process.Kill()
		t.Errorf("knit dev did not stop within 1m of SIGTERM:\n%s", d.output)
		return <-d.exited
	}
}

func (d *knitDev) client(t *testing.T) client.Client {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(d.stateDir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// kubectl runs bin/kubectl against this knit dev and returns its output.
func (d *knitDev) kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir(t), "kubectl"), append([]string{"--kubeconfig", filepath.Join(d.stateDir, "kubeconfig")}, args...)...)
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// children lists the pids whose parent is the knit dev process, across
// all its threads (a child belongs to the thread that started it).
func (d *knitDev) children(t *testing.T) []int {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", d.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		for _, field := range strings.Fields(string(data)) {
			var pid int
			if _, err := fmt.Sscan(field, &pid); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// syncBuffer collects a process's output for failure messages.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var _ io.Writer = (*syncBuffer)(nil)

// replicaStarts counts the replicas the local runtime started for a
// Deployment: each writes its app's output to a log file of its own,
// <state>/logs/<namespace>/<deployment>/<replica>-user-container.log.
func (d *knitDev) replicaStarts(t *testing.T, namespace, deployment string) int {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(d.stateDir, "logs", namespace, deployment, "*-user-container.log"))
	if err != nil {
		t.Fatal(err)
	}
	return len(logs)
}

// podLogs reads the log of container of the first Pod matching selector
// through the API server's pods/log, as kubectl logs does, waiting for
// the Pod to be published.
func (d *knitDev) podLogs(t *testing.T, namespace, selector, container string) string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(d.stateDir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var logs string
	waitFor(t, "a Pod's log through the API server", time.Minute, func(ctx context.Context) (bool, string) {
		pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil || len(pods.Items) == 0 {
			return false, fmt.Sprintf("pods: %v", err)
		}
		stream, err := cs.CoreV1().Pods(namespace).GetLogs(pods.Items[0].Name, &corev1.PodLogOptions{Container: container}).Stream(ctx)
		if err != nil {
			return false, err.Error()
		}
		defer stream.Close()
		b, err := io.ReadAll(stream)
		logs = string(b)
		return err == nil && logs != "", fmt.Sprintf("%q %v", logs, err)
	})
	return logs
}
