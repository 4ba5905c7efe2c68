//go:build !unit

package charttest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// apiServer is a real kube-apiserver and etcd (envtest, RBAC on) with a
// kubeconfig kubectl and helm can use.
type apiServer struct {
	kubectl, kubeconfig string
	client              kubernetes.Interface
}

// startAPIServer starts envtest from $KUBEBUILDER_ASSETS, or skips t
// when `make tools` has not provided it.
func startAPIServer(t *testing.T) *apiServer {
	t.Helper()
	helmBinary(t) // skip before paying for an API server
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run through `make test` or `make chart-test`, which build kube-apiserver, etcd and kubectl into ./bin")
	}
	kubectl := filepath.Join(assets, "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("no kubectl in KUBEBUILDER_ASSETS=%s: run `make tools`", assets)
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start kube-apiserver: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	// env.KubeConfig is the admin user (system:masters) envtest made.
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &apiServer{kubectl: kubectl, kubeconfig: kubeconfig, client: client}
}

// run runs kubectl with stdin and returns its output, failing t on error.
func (s *apiServer) run(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command(s.kubectl, append([]string{"--kubeconfig", s.kubeconfig}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// split separates the CRDs of a rendered chart from the rest: objects of
// knit's kinds cannot be checked until their CRDs are established.
func split(m manifest) (crds, rest manifest) {
	for _, o := range m {
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o)
		} else {
			rest = append(rest, o)
		}
	}
	return crds, rest
}

// The API server accepts every object the chart renders, for several
// sets of values (a server-side dry run: schema, defaults, validation,
// admission); helm install itself dry-runs against it; and once applied,
// the RBAC answers each component's requests as its code needs.
func TestAPIServer(t *testing.T) {
	s := startAPIServer(t)
	s.run(t, nil, "create", "namespace", "knit-system")

	m := render(t, "--include-crds")
	crds, rest := split(m)
	if len(crds) != 11 {
		t.Fatalf("the chart carries %d CRDs, want knit's 11 (charts/knit/crds)", len(crds))
	}
	s.run(t, yamlOf(t, crds), "apply", "--server-side", "-f", "-")
	s.run(t, nil, "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")

	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"defaults", nil},
		{"every option", []string{"--set", "ingress.service.type=LoadBalancer", "--set", "ingress.service.nodePort=31080",
			"--set", "ingress.service.loadBalancerIP=192.0.2.10", "--set", "ingress.service.annotations.example\\.com/lb=internal",
			"--set", "gitserver.service.type=NodePort", "--set", "gitserver.persistent=false",
			"--set", "controller.gitopsRules[0].apiGroups[0]=", "--set", "controller.gitopsRules[0].resources[0]=configmaps",
			"--set", "controller.gitopsRules[0].verbs={get,create,patch,delete}",
			"--set", "activator.replicas=1", "--set", "rbac.aggregateToDefaultRoles=false"}},
		{"builds on", []string{"--set", "build.registry=registry.example/knit", "--set", "build.insecure=true",
			"--set", "build.registrySecret=push", "--set", "build.goproxy=https://proxy.example", "--set", "build.cache.storageClassName=fast"}},
		{"ClusterIP, storage class, no domain", []string{"--set", "ingress.service.type=ClusterIP", "--set", "gitserver.storageClassName=fast", "--set", "domain="}},
	} {
		t.Run("dry-run "+tc.name, func(t *testing.T) {
			_, rest := split(render(t, tc.flags...))
			out := s.run(t, yamlOf(t, rest), "apply", "--dry-run=server", "-f", "-")
			if n := strings.Count(out, "(server dry run)"); n != len(rest) {
				t.Errorf("kubectl dry-ran %d objects, want %d:\n%s", n, len(rest), out)
			}
		})
	}

	t.Run("helm install dry-run", func(t *testing.T) {
		out, err := helm(t, "install", "knit", chartDir, "--namespace", "knit-system", "--dry-run=server", "--kubeconfig", s.kubeconfig)
		if err != nil {
			t.Fatalf("helm install --dry-run=server: %v", err)
		}
		if !strings.Contains(out, "NOTES:") || !strings.Contains(out, "port-forward svc/knit-gitserver 8090") {
			t.Errorf("helm install printed no usable NOTES:\n%s", out)
		}
	})

	// Applied with builds on, so the build rules are there to check too.
	_, rest = split(render(t, "--set", "build.registry=registry.example/knit"))
	s.run(t, yamlOf(t, rest), "apply", "--server-side", "-f", "-")
	checkRBAC(t, s.client)
}
