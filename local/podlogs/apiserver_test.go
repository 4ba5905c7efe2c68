//go:build !unit

package podlogs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/knitops/knit/local/controlplane"
)

// TestKubectlLogsThroughTheAPIServer is what `kubectl logs` does: GET
// pods/P/log of a real kube-apiserver started as knit dev starts it,
// which calls this endpoint at the Node's address with its kubelet client
// certificate; the file's lines come back, and an unknown container's
// 404 reaches the client in the kubelet's words.
func TestKubectlLogsThroughTheAPIServer(t *testing.T) {
	bin := os.Getenv("KUBEBUILDER_ASSETS")
	if bin == "" {
		t.Fatal("KUBEBUILDER_ASSETS is unset: run `make tools` and `KUBEBUILDER_ASSETS=$PWD/bin go test`, or `go test -tags unit` for the unit tests alone")
	}
	ctx := log.IntoContext(context.Background(), testr.New(t))
	cp, err := controlplane.Start(ctx, controlplane.Options{StateDir: t.TempDir(), BinDir: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })

	path := filepath.Join(t.TempDir(), "app.log")
	stamped(t, path, time.Now().Add(-time.Minute), "hello from the app", "second line")
	live := make(chan struct{})
	port := serveFor(t, cp, &fakeSource{path: path, live: live})

	c, err := client.New(cp.RESTConfig(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := PublishNode(ctx, c, NodeSpec{Name: "this-machine", Port: port}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: corev1.PodSpec{NodeName: "this-machine", Containers: []corev1.Container{
			{Name: "app", Image: "example.com/app"}, {Name: "db", Image: "example.com/db"},
		}},
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}

	cs := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	got, err := cs.CoreV1().Pods("ns").GetLogs("web", &corev1.PodLogOptions{Container: "app", TailLines: ptr(int64(1))}).DoRaw(ctx)
	if err != nil || string(got) != "second line\n" {
		t.Errorf("logs --tail 1 = %q, %v; want the file's last line", got, err)
	}
	stream, err := cs.CoreV1().Pods("ns").GetLogs("web", &corev1.PodLogOptions{Container: "app", Timestamps: true}).Stream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(stream)
	stream.Close()
	if err != nil || !strings.HasSuffix(strings.SplitN(string(all), "\n", 2)[0], "Z hello from the app") {
		t.Errorf("logs --timestamps = %q, %v; want the lines with their times", all, err)
	}
	// -f: what is appended comes through the API server while it is
	// written, and the stream ends when the container is gone.
	follow, err := cs.CoreV1().Pods("ns").GetLogs("web", &corev1.PodLogOptions{Container: "app", Follow: true, TailLines: ptr(int64(1))}).Stream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer follow.Close()
	first := make([]byte, len("second line\n"))
	if _, err := io.ReadFull(follow, first); err != nil || string(first) != "second line\n" {
		t.Fatalf("logs -f --tail 1: first %q, %v", first, err)
	}
	stamped(t, path, time.Now(), "written while followed")
	next := make([]byte, len("written while followed\n"))
	if _, err := io.ReadFull(follow, next); err != nil || string(next) != "written while followed\n" {
		t.Fatalf("logs -f: then %q, %v; want the appended line", next, err)
	}
	close(live)
	if rest, err := io.ReadAll(follow); err != nil || len(rest) != 0 {
		t.Errorf("logs -f after the container is gone: %q, %v; want the end", rest, err)
	}

	// A 400 reaches kubectl with the endpoint's words; a 404 as the API
	// server's NotFound, as a kubelet's does.
	_, err = cs.CoreV1().Pods("ns").GetLogs("web", &corev1.PodLogOptions{Container: "app", Previous: true}).Stream(ctx)
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `previous terminated container "app" in pod "web" not found`) {
		t.Errorf("logs --previous = %v, want the endpoint's 400 and its message", err)
	}
	_, err = cs.CoreV1().Pods("ns").GetLogs("web", &corev1.PodLogOptions{Container: "db"}).DoRaw(ctx)
	if !apierrors.IsNotFound(err) {
		t.Errorf("logs -c db = %v, want NotFound", err)
	}
}

// serveFor runs the endpoint as knit dev does, with a serving certificate
// of the control plane's CA and its kubelet client as the one client, and
// returns its port.
func serveFor(t *testing.T, cp *controlplane.ControlPlane, src Source) int32 {
	t.Helper()
	certPEM, keyPEM, err := cp.IssueServingCert("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cp.CAPEM())
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := New(Options{Source: src, Cert: cert, ClientCAs: pool, ClientCN: controlplane.KubeletClientCN, Log: logr.Discard()})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return int32(ln.Addr().(*net.TCPAddr).Port)
}

func ptr[T any](v T) *T { return &v }
