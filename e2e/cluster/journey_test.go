//go:build cluster

package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// ns is where the journey deploys; recreated on every run.
const ns = "journey"

// journey is one user's path through knit on a cluster; steps share it
// and run in order.
type journey struct {
	*cluster
	ingress   string // node IP:node port
	revisions []string
	gitDir    string // the pushed work tree
	gitSHA    string // its pushed head
	tmp       string // outlives the steps, unlike their own TempDirs
}

func TestClusterJourney(t *testing.T) {
	j := &journey{cluster: newCluster(t), tmp: t.TempDir()}
	steps := []struct {
		name string
		run  func(*testing.T)
	}{
		{"knit dev refuses a cluster with nodes", j.refuseKnitDev},
		{"helm install", j.install},
		{"a Knative Service serves through the ingress", j.hello},
		{"knit's internal endpoints refuse other callers", j.internalEndpoints},
		{"a template change makes a new revision", j.templateChange},
		{"kubectl shows Knative's columns", j.columns},
		{"50/50 split and a tag URL", j.split},
		{"private services answer inside the cluster only", j.private},
		{"scale to zero and back through the activator", j.scaleToZero},
		{"steady load across a rollout and pod deletions", j.steadyLoad},
		{"a new controller leader rolls out", j.leaderFailover},
		{"git push deploys", j.gitPush},
		{"a forge webhook reaches the controller", j.webhook},
		{"git push of code builds it in the cluster", j.buildOnPush},
		{"git push of a Dockerfile builds it with rootless BuildKit", j.buildDockerfile},
		{"helm uninstall", j.uninstall},
	}
	for _, s := range steps {
		ok := t.Run(s.name, func(t *testing.T) {
			j.t = t
			s.run(t)
		})
		if !ok {
			t.Fatalf("step %q failed; later steps depend on it", s.name)
		}
	}
}

func (j *journey) refuseKnitDev(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "knit")
	build := exec.Command("go", "build", "-o", bin, "./cmd/knit")
	build.Dir = j.root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dev := exec.Command(bin, "dev", "--kubeconfig", j.kubeconfig, "--state-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--https-addr", "127.0.0.1:0", "--git-addr", "127.0.0.1:0")
	out, err := dev.CombinedOutput()
	if err == nil {
		t.Fatalf("knit dev --kubeconfig <cluster with a Ready node> started:\n%s", out)
	}
	for _, want := range []string{"Ready node", "helm install knit charts/knit"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("knit dev's refusal does not mention %q:\n%s", want, out)
		}
	}
}

func (j *journey) install(t *testing.T) {
	ctx := context.Background()
	// A clean start: no release, no journey namespaces from an earlier run.
	// The Git server's claim survives uninstall, as a user's repositories should.
	if out, err := j.run("helm", "uninstall", "knit", "-n", systemNamespace, "--wait", "--ignore-not-found"); err != nil {
		t.Fatalf("helm uninstall: %v\n%s", err, out)
	}
	for _, name := range []string{ns, ns + "-hooks"} {
		_ = j.c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		j.waitFor("namespace "+name+" gone", 2*time.Minute, func(ctx context.Context) (bool, string) {
			err := j.c.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		if err := j.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
		// GitOps syncs write as the namespace's knit-gitops ServiceAccount
		// (controller.gitopsServiceAccount): the namespace admin's step,
		// binding the chart's knit-gitops ClusterRole.
		for _, o := range []client.Object{
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "knit-gitops"}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "knit-gitops"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "knit-gitops"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: name, Name: "knit-gitops"}}},
		} {
			if err := j.c.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	began := time.Now()
	j.must("helm", "upgrade", "--install", "knit", "charts/knit", "-n", systemNamespace, "--create-namespace",
		"--wait", "--timeout", "5m", "-f", "e2e/cluster/testdata/values.yaml", "--set", "gitserver.deployNamespace="+ns,
		// A repository on knit's Git server belongs to one namespace: the
		// webhook journey's is assigned to its own.
		"--set", "gitserver.repositoryNamespaces."+hooksRepo+"="+ns+"-hooks")
	t.Logf("helm install --wait took %s", time.Since(began).Round(time.Second))
	want := map[string]int{"knit-controller": 2, "knit-activator": 2, "knit-ingress": 2, "knit-autoscaler": 1, "knit-gitserver": 1}
	for name, n := range want {
		j.waitFor(fmt.Sprintf("%d ready %s pod(s)", n, name), 3*time.Minute, func(ctx context.Context) (bool, string) {
			pods, err := j.pods(ctx, systemNamespace, map[string]string{"app.kubernetes.io/name": name})
			if err != nil {
				return false, err.Error()
			}
			return readyPods(pods) == n, fmt.Sprintf("%d of %d ready", readyPods(pods), len(pods))
		})
	}
	j.ingress = j.ingressAddr()
}

// apply applies a manifest with kubectl, retrying while the admission
// webhooks are not reachable yet (their certificate is being patched in).
func (j *journey) apply(manifest string) {
	j.t.Helper()
	f := filepath.Join(j.t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(f, []byte(manifest), 0o600); err != nil {
		j.t.Fatal(err)
	}
	j.waitFor("kubectl apply", time.Minute, func(context.Context) (bool, string) {
		out, err := j.run("kubectl", "apply", "-f", f)
		return err == nil, out
	})
}

func helloService(target string) string {
	return fmt.Sprintf(`apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: hello
  namespace: %s
spec:
  template:
    spec:
      containers:
        - image: %s
          env:
            - name: TARGET
              value: %s
`, ns, helloImage, target)
}

func (j *journey) host(prefix string) string { return prefix + "." + ns + "." + domain }

func (j *journey) hello(t *testing.T) {
	j.apply(helloService("cluster"))
	rev := j.waitServiceReady(ns, "hello", "", 3*time.Minute)
	j.revisions = append(j.revisions, rev)
	j.waitBody(j.ingress, j.host("hello"), "Hello cluster!", time.Minute)
	s, err := j.service(context.Background(), ns, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://" + j.host("hello"); s.Status.URL != want {
		t.Errorf("Service URL = %v, want %s", s.Status.URL, want)
	}
	pods, err := j.pods(context.Background(), ns, map[string]string{servingv1.RevisionLabelKey: rev})
	if err != nil || len(pods) == 0 {
		t.Fatalf("pods of %s: %v (%d)", rev, err, len(pods))
	}
	if got := len(pods[0].Spec.Containers); got != 2 {
		t.Errorf("pod %s has %d containers, want the app and the queue-proxy", pods[0].Name, got)
	}
}

func (j *journey) templateChange(t *testing.T) {
	j.apply(helloService("v2"))
	rev := j.waitServiceReady(ns, "hello", j.revisions[0], 3*time.Minute)
	j.revisions = append(j.revisions, rev)
	j.waitBody(j.ingress, j.host("hello"), "Hello v2!", time.Minute)
	if err := j.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: j.revisions[0]}, &servingv1.Revision{}); err != nil {
		t.Errorf("the first revision is gone after a template change: %v", err)
	}
}

func (j *journey) columns(t *testing.T) {
	out := j.must("kubectl", "get", "ksvc,rev,kpa", "-n", ns)
	for _, want := range []string{
		"NAME", "URL", "LATESTCREATED", "LATESTREADY", "READY", "REASON", // ksvc
		"CONFIG NAME", "GENERATION", "ACTUAL REPLICAS", "DESIRED REPLICAS", // rev
		"DESIREDSCALE", "ACTUALSCALE", // kpa
		"http://" + j.host("hello"), j.revisions[1],
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get ksvc,rev,kpa lacks %q:\n%s", want, out)
		}
	}
}

func (j *journey) split(t *testing.T) {
	j.apply(helloService("v2") + fmt.Sprintf(`  traffic:
    - revisionName: %s
      percent: 50
      tag: old
    - revisionName: %s
      percent: 50
`, j.revisions[0], j.revisions[1]))
	j.waitBody(j.ingress, j.host("old-hello"), "Hello cluster!", time.Minute)
	// Both revisions answer before counting, so a replica still starting
	// does not skew the split.
	counts := map[string]int{}
	j.waitFor("both revisions answer", time.Minute, func(context.Context) (bool, string) {
		_, body, _ := j.get(j.ingress, j.host("hello"))
		counts[body]++
		return counts["Hello cluster!"] > 0 && counts["Hello v2!"] > 0, fmt.Sprint(counts)
	})
	counts = map[string]int{}
	for range 500 {
		code, body, err := j.get(j.ingress, j.host("hello"))
		if err != nil || code != http.StatusOK {
			t.Fatalf("split request: %d %q %v", code, body, err)
		}
		counts[body]++
	}
	for _, body := range []string{"Hello cluster!", "Hello v2!"} {
		if n := counts[body]; n < 245 || n > 255 {
			t.Errorf("%q answered %d of 500, want 250±5 (all: %v)", body, n, counts)
		}
	}
}

func (j *journey) scaleToZero(t *testing.T) {
	j.apply(helloService("v2")) // all traffic back to the latest revision, tag gone
	rev := j.revisions[1]
	j.waitFor("no pods of "+rev+" after the stable window and grace period", 3*time.Minute, func(ctx context.Context) (bool, string) {
		pods, err := j.pods(ctx, ns, map[string]string{servingv1.RevisionLabelKey: rev})
		if err != nil {
			return false, err.Error()
		}
		pa := &autoscalingv1alpha1.PodAutoscaler{}
		if err := j.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: rev}, pa); err != nil {
			return false, err.Error()
		}
		return len(pods) == 0 && ptr.Deref(pa.Status.DesiredScale, -1) == 0,
			fmt.Sprintf("%d pods, desired scale %d", len(pods), ptr.Deref(pa.Status.DesiredScale, -1))
	})
	began := time.Now()
	code, body, err := j.get(j.ingress, j.host("hello"))
	if err != nil || code != http.StatusOK || body != "Hello v2!" {
		t.Fatalf("request to a revision at zero: %d %q %v", code, body, err)
	}
	t.Logf("cold start on a real pod: first byte after %s", time.Since(began).Round(time.Millisecond))
}
