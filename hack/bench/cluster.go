package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
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
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// The cluster part: knit installed by its chart on the test cluster
// (make cluster), helloworld's image in a Knative Service and in a plain
// pod, timed side by side.
const (
	clusterNamespace = "knit-bench"
	clusterHost      = "hello." + clusterNamespace + ".example.com"
	clusterImage     = "knit.local/examples/helloworld:latest"
	idleWindow       = 30 * time.Second
	// buildRuns are the pushes of code the build part times: one cold,
	// the rest warm.
	buildRuns = 4
)

// clusterSettings are the chart values of the bench's install: the images
// of make cluster-images, Knative's windows shortened so a revision is at
// zero in seconds.
var clusterSettings = []string{
	"image.repository=knit.local", "image.tag=dev", "domain=example.com", "drainQuietPeriod=3s",
	"config.autoscaler.stable-window=6s", "config.autoscaler.scale-to-zero-grace-period=4s",
}

// clusterRun is one round: a plain pod of the image created until Ready,
// and a request to the revision at zero until its first byte.
type clusterRun struct {
	podReady, ttfb time.Duration
}

// podUsage is one knit pod's footprint while nothing is deployed but an
// idle revision at zero.
type podUsage struct {
	name   string
	memory uint64        // working set, bytes
	cpu    time.Duration // CPU time over the idle window
}

type clusterResult struct {
	install time.Duration
	runs    []clusterRun
	idle    []podUsage
	replica []containerUsage
	builds  []buildRun
	// dockerfile is nil when the part was not run
	// (-cluster-dockerfile-runs 0).
	dockerfile *clusterDockerfileResult
}

// benchCluster drives the test cluster with kubectl, helm and a client.
type benchCluster struct {
	root, binDir, kubeconfig string
	k                        kubernetes.Interface
	progress                 io.Writer
	// claimKept says the build cache claim was there before the build
	// part's first build (measureBuilds reads it).
	claimKept bool
}

// measureCluster runs the cluster part: runs cold starts beside plain
// pods, the idle footprint, the ko:// builds and, unless dockerfileChanges
// is 0, a dockerfile:// first push and that many code changes.
func measureCluster(ctx context.Context, root, binDir, kubeconfig string, runs, dockerfileChanges int, progress io.Writer) (*clusterResult, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	k, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	b := &benchCluster{root: root, binDir: binDir, kubeconfig: kubeconfig, k: k, progress: progress}
	res := &clusterResult{}
	began := time.Now()
	args := []string{"upgrade", "--install", "knit", "charts/knit", "-n", "knit-system", "--create-namespace", "--wait", "--timeout", "5m"}
	for _, s := range clusterSettings {
		args = append(args, "--set", s)
	}
	if err := b.run(ctx, "helm", args...); err != nil {
		return nil, err
	}
	res.install = time.Since(began)
	defer b.cleanup()
	ingress, err := b.ingressAddr(ctx)
	if err != nil {
		return nil, err
	}
	if err := b.deploy(ctx, ingress, "hello", nil); err != nil {
		return nil, err
	}
	for i := range runs {
		if err := b.waitZero(ctx); err != nil {
			return nil, err
		}
		var r clusterRun
		if r.podReady, err = b.plainPod(ctx, i); err != nil {
			return nil, fmt.Errorf("plain pod: %w", err)
		}
		if err := b.waitZero(ctx); err != nil {
			return nil, err
		}
		conn, err := net.Dial("tcp", ingress)
		if err != nil {
			return nil, err
		}
		if r.ttfb, err = firstByteFrom(conn, clusterHost, helloBody, time.Time{}, time.Now().Add(requestTimeout)); err != nil {
			return nil, fmt.Errorf("cold start %d: %w", i+1, err)
		}
		fmt.Fprintf(progress, "cluster run %d: plain pod create → Ready %s, request at zero → first byte %s\n", i+1, r.podReady, r.ttfb)
		res.runs = append(res.runs, r)
	}
	if err := b.waitZero(ctx); err != nil {
		return nil, err
	}
	if res.idle, err = b.idleUsage(ctx); err != nil {
		return nil, fmt.Errorf("idle footprint: %w", err)
	}
	if res.replica, err = b.replicaUsage(ctx, ingress); err != nil {
		return nil, fmt.Errorf("a warm replica: %w", err)
	}
	if res.builds, err = b.measureBuilds(ctx, ingress, buildRuns); err != nil {
		return nil, fmt.Errorf("builds: %w", err)
	}
	if dockerfileChanges > 0 {
		if res.dockerfile, err = b.measureClusterDockerfile(ctx, root, ingress, dockerfileChanges); err != nil {
			return nil, fmt.Errorf("dockerfile builds: %w", err)
		}
	}
	return res, nil
}

func (b *benchCluster) run(ctx context.Context, tool string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(b.binDir, tool), args...)
	cmd.Dir = b.root
	cmd.Env = append(os.Environ(), "KUBECONFIG="+b.kubeconfig)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", tool, strings.Join(args, " "), err, out)
	}
	return nil
}

// cleanup leaves the cluster as it found it: no bench namespace, no knit.
func (b *benchCluster) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_ = b.k.CoreV1().Namespaces().Delete(ctx, clusterNamespace, metav1.DeleteOptions{})
	if err := b.run(ctx, "helm", "uninstall", "knit", "-n", "knit-system", "--wait"); err != nil {
		fmt.Fprintln(b.progress, "bench:", err)
	}
}

func (b *benchCluster) ingressAddr(ctx context.Context) (string, error) {
	svc, err := b.k.CoreV1().Services("knit-system").Get(ctx, "knit-ingress", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	nodes, err := b.k.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		return "", fmt.Errorf("nodes: %v", err)
	}
	for _, a := range nodes.Items[0].Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return net.JoinHostPort(a.Address, strconv.Itoa(int(svc.Spec.Ports[0].NodePort))), nil
		}
	}
	return "", fmt.Errorf("node %s has no InternalIP", nodes.Items[0].Name)
}

// deploy applies helloworld as the Knative Service name, its revision
// template annotated with annotations, and waits until the ingress answers
// for it (kubectl apply retried while the webhooks' first certificate is
// being trusted).
func (b *benchCluster) deploy(ctx context.Context, ingress, name string, annotations map[string]string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterNamespace}}
	if _, err := b.k.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	f := filepath.Join(os.TempDir(), "knit-bench-"+name+".json")
	manifest, err := json.Marshal(map[string]any{
		"apiVersion": "serving.knative.dev/v1", "kind": "Service",
		"metadata": map[string]any{"name": name, "namespace": clusterNamespace},
		"spec": map[string]any{"template": map[string]any{
			"metadata": map[string]any{"annotations": annotations},
			"spec":     map[string]any{"containers": []any{map[string]any{"image": clusterImage}}},
		}},
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(f, manifest, 0o600); err != nil {
		return err
	}
	defer os.Remove(f)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		if err = b.run(ctx, "kubectl", "apply", "-f", f); err == nil {
			break
		}
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	return waitAnswerFrom(ctx, ingress, name+"."+clusterNamespace+".example.com", firstServeTimeout)
}

// waitZero waits until no pod of the bench's Service is left.
func (b *benchCluster) waitZero(ctx context.Context) error {
	sel := servingv1.ServiceLabelKey + "=hello"
	for deadline := time.Now().Add(zeroTimeout * 2); time.Now().Before(deadline); {
		pods, err := b.k.CoreV1().Pods(clusterNamespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return err
		}
		if len(pods.Items) == 0 {
			return nil
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("the revision did not scale to zero within %s", zeroTimeout*2)
}

// plainPod creates a pod of the same image with the readiness probe a
// user would write (HTTP, every second: the kubelet's finest period) and
// times create → Ready as the API reports it, then deletes it.
func (b *benchCluster) plainPod(ctx context.Context, i int) (time.Duration, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("plain-%d", i), Namespace: clusterNamespace},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{
				Name: "app", Image: clusterImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}},
					PeriodSeconds: 1,
				},
			}},
		},
	}
	pods := b.k.CoreV1().Pods(clusterNamespace)
	began := time.Now()
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	defer pods.Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	for deadline := began.Add(firstServeTimeout); time.Now().Before(deadline); {
		p, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return 0, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return time.Since(began), nil
			}
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("pod not Ready within %s", firstServeTimeout)
}

// kubeletSummary is the part of the kubelet's /stats/summary read here.
type kubeletSummary struct {
	Pods []struct {
		PodRef struct{ Name, Namespace string } `json:"podRef"`
		CPU    *struct {
			UsageCoreNanoSeconds *uint64 `json:"usageCoreNanoSeconds"`
		} `json:"cpu"`
		Memory     *summaryMemory `json:"memory"`
		Containers []struct {
			Name   string         `json:"name"`
			Memory *summaryMemory `json:"memory"`
		} `json:"containers"`
	} `json:"pods"`
}

// summaryMemory is a pod's or a container's memory in the summary: its
// cgroup's usage, the working set (usage less inactive file pages, what
// kubectl top shows and eviction weighs) and RSS (anonymous memory).
type summaryMemory struct {
	UsageBytes      *uint64 `json:"usageBytes"`
	WorkingSetBytes *uint64 `json:"workingSetBytes"`
	RSSBytes        *uint64 `json:"rssBytes"`
}

// idleUsage reads the kubelet's summary of every knit-system pod twice,
// idleWindow apart, through the API server's node proxy: memory at the
// end, CPU time in between.
func (b *benchCluster) idleUsage(ctx context.Context) ([]podUsage, error) {
	read := func() (map[string]podUsage, error) {
		s, err := b.summary(ctx)
		if err != nil {
			return nil, err
		}
		out := map[string]podUsage{}
		for _, p := range s.Pods {
			if p.PodRef.Namespace != "knit-system" || p.CPU == nil || p.Memory == nil || p.CPU.UsageCoreNanoSeconds == nil || p.Memory.WorkingSetBytes == nil {
				continue
			}
			out[p.PodRef.Name] = podUsage{name: p.PodRef.Name, memory: *p.Memory.WorkingSetBytes, cpu: time.Duration(*p.CPU.UsageCoreNanoSeconds)}
		}
		return out, nil
	}
	before, err := read()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(b.progress, "cluster: idle for %s\n", idleWindow)
	if err := sleep(ctx, idleWindow); err != nil {
		return nil, err
	}
	after, err := read()
	if err != nil {
		return nil, err
	}
	var usage []podUsage
	for name, a := range after {
		if p, ok := before[name]; ok {
			a.cpu -= p.cpu
			usage = append(usage, a)
		}
	}
	slices.SortFunc(usage, func(x, y podUsage) int { return strings.Compare(x.name, y.name) })
	return usage, nil
}

// waitAnswerFrom polls the ingress until host answers with helloworld.
func waitAnswerFrom(ctx context.Context, ingress, host string, timeout time.Duration) error {
	return waitBodyFrom(ctx, ingress, host, helloBody, timeout)
}

// waitBodyFrom polls the ingress until host answers 200 with want.
func waitBodyFrom(ctx context.Context, ingress, host, want string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		var conn net.Conn
		if conn, err = net.Dial("tcp", ingress); err == nil {
			if _, err = firstByteFrom(conn, host, want, time.Time{}, time.Now().Add(requestTimeout)); err == nil {
				return nil
			}
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s not answering within %s: %w", host, timeout, err)
}
