//go:build !unit

package controlplane

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// binDir is where `make tools` put the real binaries; the Makefile exports
// KUBEBUILDER_ASSETS for envtest and for these tests alike.
func binDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		t.Fatal("KUBEBUILDER_ASSETS is unset: run `make tools` and `KUBEBUILDER_ASSETS=$PWD/bin go test`, or `go test -tags unit` for the unit tests alone")
	}
	return dir
}

func start(t *testing.T, state, bin string) *ControlPlane {
	t.Helper()
	ctx := log.IntoContext(context.Background(), testr.New(t))
	began := time.Now()
	cp, err := Start(ctx, Options{StateDir: state, BinDir: bin})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Logf("control plane up at %s in %s", cp.APIURL(), time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() { _ = cp.Stop() })
	return cp
}

// stop stops cp and checks that neither child is left behind.
func stop(t *testing.T, cp *ControlPlane) {
	t.Helper()
	pids := map[string]int{"etcd": cp.etcd.pid(), "kube-apiserver": cp.apiserver.pid()}
	if err := cp.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := cp.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	for name, pid := range pids {
		assertGone(t, name, pid)
	}
}

func kubeClient(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("load kubeconfig: %v", err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

func TestStateSurvivesRestart(t *testing.T) {
	bin := binDir(t)
	state := t.TempDir()
	ctx := context.Background()

	cp := start(t, state, bin)
	kubeconfig, apiURL := cp.KubeconfigPath(), cp.APIURL()
	c := kubeClient(t, kubeconfig)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "survivor", Namespace: "default"},
		Data:       map[string]string{"written": "before restart"},
	}
	if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ConfigMap: %v", err)
	}
	stop(t, cp)

	cp = start(t, state, bin)
	if cp.APIURL() != apiURL {
		t.Errorf("API moved from %s to %s; an exported kubeconfig would go stale", apiURL, cp.APIURL())
	}
	// The client built from the first run's kubeconfig must still work:
	// same CA, same token, same port.
	got, err := c.CoreV1().ConfigMaps("default").Get(ctx, "survivor", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ConfigMap after restart: %v", err)
	}
	if got.Data["written"] != "before restart" {
		t.Errorf("ConfigMap data = %v, want written=before restart", got.Data)
	}

	rc, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatalf("client from RESTConfig: %v", err)
	}
	if _, err := rc.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err != nil {
		t.Errorf("RESTConfig client: %v", err)
	}
	// A client's open watch (kubectl get -w) must not hold the API
	// server's exit: it used to outlast stopTimeout, and Stop killed it
	// and said so.
	w, err := c.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	stop(t, cp)
}

// An app's projected service-account token must carry only its
// ServiceAccount's rights: a token of a namespace's default ServiceAccount
// may not list that namespace's Secrets, while the admin still may.
func TestServiceAccountTokenIsNotAdmin(t *testing.T) {
	bin := binDir(t)
	ctx := context.Background()
	cp := start(t, t.TempDir(), bin)
	admin, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "default"}}
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create ServiceAccount: %v", err)
	}
	tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	cfg := rest.AnonymousClientConfig(cp.RESTConfig())
	cfg.BearerToken = tr.Status.Token
	app, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = app.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("list Secrets with the default ServiceAccount's token: %v, want Forbidden", err)
	}
	if _, err := admin.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list Secrets as admin: %v", err)
	}
}
