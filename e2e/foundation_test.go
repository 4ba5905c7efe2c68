//go:build !unit

package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// TestFoundationJourney is the foundation issue's user journey: knit dev
// comes up, Knative YAML is defaulted and validated through a real API
// server, kubectl sees Knative's short names and columns, Ctrl-C leaves no
// process behind and the state survives a restart.
func TestFoundationJourney(t *testing.T) {
	stateDir := filepath.Join(t.TempDir(), "state")
	d := startKnitDev(t, stateDir)
	c := d.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("a second knit dev on the same state dir is refused", func(t *testing.T) {
		cmd := exec.Command(buildKnit(t), "dev", "--state-dir", stateDir, "--bin-dir", binDir(t),
			"--http-addr", freeAddr(t), "--https-addr", freeAddr(t), "--git-addr", freeAddr(t))
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "in use") {
			t.Errorf("second knit dev: err=%v, output:\n%s\nwant a failure saying the state dir is in use", err, out)
		}
	})

	t.Run("min-scale above max-scale is refused naming the annotation", func(t *testing.T) {
		out, err := d.kubectl(t, "apply", "-f", "examples/helloworld/bad-scale.yaml")
		if err == nil || !strings.Contains(out, "autoscaling.knative.dev/min-scale") {
			t.Errorf("kubectl apply bad-scale: err=%v, output:\n%s\nwant a refusal naming autoscaling.knative.dev/min-scale", err, out)
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "bad-scale"}, &servingv1.Service{}); err == nil {
			t.Error("refused Service bad-scale was stored")
		}
	})

	t.Run("a minimal Service is stored defaulted", func(t *testing.T) {
		svc := &servingv1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "minimal"},
			Spec: servingv1.ServiceSpec{ConfigurationSpec: servingv1.ConfigurationSpec{Template: servingv1.RevisionTemplateSpec{
				Spec: servingv1.RevisionSpec{PodSpec: servingv1.PodSpec{Containers: []corev1.Container{{Image: "ko://github.com/knitops/knit/examples/helloworld"}}}},
			}}},
		}
		if err := c.Create(ctx, svc); err != nil {
			t.Fatalf("create minimal Service: %v", err)
		}
		got := &servingv1.Service{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(svc), got); err != nil {
			t.Fatal(err)
		}
		spec := got.Spec.Template.Spec
		if spec.ContainerConcurrency == nil || *spec.ContainerConcurrency != 0 {
			t.Errorf("containerConcurrency = %v, want 0", spec.ContainerConcurrency)
		}
		if spec.TimeoutSeconds == nil || *spec.TimeoutSeconds != 300 {
			t.Errorf("timeoutSeconds = %v, want 300", spec.TimeoutSeconds)
		}
		if len(got.Spec.Traffic) != 1 || got.Spec.Traffic[0].Percent == nil || *got.Spec.Traffic[0].Percent != 100 {
			t.Errorf("traffic = %+v, want latestRevision 100%%", got.Spec.Traffic)
		}
	})

	t.Run("kubectl knows Knative's short names and columns", func(t *testing.T) {
		out, err := d.kubectl(t, "apply", "-f", "examples/helloworld/service.yaml")
		if err != nil {
			t.Fatalf("kubectl apply service.yaml: %v\n%s", err, out)
		}
		out, err = d.kubectl(t, "get", "ksvc", "hello")
		if err != nil {
			t.Fatalf("kubectl get ksvc: %v\n%s", err, out)
		}
		header := strings.Fields(strings.SplitN(out, "\n", 2)[0])
		want := []string{"NAME", "URL", "LATESTCREATED", "LATESTREADY", "READY", "REASON"}
		if strings.Join(header, " ") != strings.Join(want, " ") {
			t.Errorf("kubectl get ksvc columns = %v, want %v", header, want)
		}
		for _, short := range []string{"kservice", "cfg", "rev", "rt", "kpa", "sks", "gitrepo", "pr", "eventsinks"} {
			if out, err := d.kubectl(t, "get", short); err != nil {
				t.Errorf("kubectl get %s: %v\n%s", short, err, out)
			}
		}
	})

	t.Run("ingress answers unknown hosts with 404", func(t *testing.T) {
		resp, err := http.Get("http://" + d.httpAddr + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "no route") {
			t.Errorf("GET unknown host = %d %q, want 404 saying there is no route", resp.StatusCode, body)
		}
	})

	t.Run("SIGTERM stops everything and the state survives a restart", func(t *testing.T) {
		children := d.children(t)
		if len(children) < 2 {
			t.Fatalf("knit dev has %d child processes, want etcd and kube-apiserver", len(children))
		}
		if err := d.stop(t); err != nil {
			t.Fatalf("knit dev exited with %v after SIGTERM:\n%s", err, d.output)
		}
		for _, pid := range children {
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("child process %d outlived knit dev", pid)
			}
		}
		d2 := startKnitDev(t, stateDir)
		if err := d2.client(t).Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, &servingv1.Service{}); err != nil {
			t.Errorf("Service hello after restart: %v", err)
		}
		if _, err := os.Stat(filepath.Join(stateDir, "kubeconfig")); err != nil {
			t.Errorf("kubeconfig after restart: %v", err)
		}
	})
}
