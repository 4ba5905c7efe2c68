//go:build cluster

package cluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/api"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/poll"
)

const (
	systemNamespace = "knit-system"
	domain          = "example.com"
	helloImage      = "knit.local/examples/helloworld:latest"
)

// cluster is the test cluster as a user sees it: kubectl, helm, an API
// client, and the ingress Service's node port.
type cluster struct {
	t          *testing.T
	root       string // the repository
	kubeconfig string
	c          client.Client
	http       *http.Client
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := os.Getenv("KNIT_CLUSTER_KUBECONFIG")
	if kubeconfig == "" {
		kubeconfig = filepath.Join(root, ".cluster", "kubeconfig")
	}
	if _, err := os.Stat(kubeconfig); err != nil {
		t.Fatalf("no test cluster (%v): run `make cluster cluster-images` first, or `make test-cluster`", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
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
	// Fresh connections per journey step would hide keep-alive bugs; a
	// pooled transport is what a load balancer in front of knit uses.
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext}
	return &cluster{t: t, root: root, kubeconfig: kubeconfig, c: c, http: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
}

// run runs a tool from ./bin against the test cluster.
func (k *cluster) run(tool string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(k.root, "bin", tool), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+k.kubeconfig)
	cmd.Dir = k.root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

func (k *cluster) must(tool string, args ...string) string {
	k.t.Helper()
	out, err := k.run(tool, args...)
	if err != nil {
		k.t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
	return out
}

// waitFor polls cond, failing with its last explanation after timeout.
func (k *cluster) waitFor(what string, timeout time.Duration, cond func(ctx context.Context) (bool, string)) {
	k.t.Helper()
	poll.Until(k.t, what, 250*time.Millisecond, timeout, cond)
}

// ingressAddr is <node InternalIP>:<node port of knit-ingress>: how a
// user without a load balancer reaches knit.
func (k *cluster) ingressAddr() string {
	k.t.Helper()
	ctx := context.Background()
	svc := &corev1.Service{}
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: "knit-ingress"}, svc); err != nil {
		k.t.Fatal(err)
	}
	nodes := &corev1.NodeList{}
	if err := k.c.List(ctx, nodes); err != nil || len(nodes.Items) == 0 {
		k.t.Fatalf("nodes: %v (%d)", err, len(nodes.Items))
	}
	for _, a := range nodes.Items[0].Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return net.JoinHostPort(a.Address, strconv.Itoa(int(svc.Spec.Ports[0].NodePort)))
		}
	}
	k.t.Fatal("the node has no InternalIP")
	return ""
}

// serviceAddr is <ClusterIP>:<port> of a Service in knit-system; the host
// routes the service CIDR to the node.
func (k *cluster) serviceAddr(name string) string {
	k.t.Helper()
	svc := &corev1.Service{}
	if err := k.c.Get(context.Background(), client.ObjectKey{Namespace: systemNamespace, Name: name}, svc); err != nil {
		k.t.Fatal(err)
	}
	return net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(svc.Spec.Ports[0].Port)))
}

// get sends one request for host to addr.
func (k *cluster) get(addr, host string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := k.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), err
}

// waitBody polls host through addr until it answers 200 with want.
func (k *cluster) waitBody(addr, host, want string, timeout time.Duration) {
	k.t.Helper()
	k.waitFor(fmt.Sprintf("%s answers %q", host, want), timeout, func(context.Context) (bool, string) {
		code, body, err := k.get(addr, host)
		return err == nil && code == http.StatusOK && body == want, fmt.Sprintf("%d %q %v", code, body, err)
	})
}

// service reads a Knative Service.
func (k *cluster) service(ctx context.Context, ns, name string) (*servingv1.Service, error) {
	s := &servingv1.Service{}
	return s, k.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)
}

// waitServiceReady waits until the Service's latest revision is ready and
// is not before (a revision name), returning it.
func (k *cluster) waitServiceReady(ns, name, before string, timeout time.Duration) string {
	k.t.Helper()
	var rev string
	k.waitFor(fmt.Sprintf("Service %s/%s Ready on a revision after %q", ns, name, before), timeout, func(ctx context.Context) (bool, string) {
		s, err := k.service(ctx, ns, name)
		if err != nil {
			return false, err.Error()
		}
		rev = s.Status.LatestReadyRevisionName
		ready := s.Status.GetCondition(duckv1.ConditionReady)
		ok := ready.IsTrue() && rev != "" && rev != before && rev == s.Status.LatestCreatedRevisionName && s.Status.ObservedGeneration == s.Generation
		return ok, fmt.Sprintf("Ready %+v, latest created %q ready %q", ready, s.Status.LatestCreatedRevisionName, rev)
	})
	return rev
}

// pods lists the pods in ns matching labels.
func (k *cluster) pods(ctx context.Context, ns string, labels map[string]string) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	err := k.c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(labels))
	return list.Items, err
}

// readyPods counts the pods that are Ready and not being deleted.
func readyPods(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}
