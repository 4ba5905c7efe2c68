package dev

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/knitops/knit/webhooks"
)

// certIssuer signs the webhook server's certificate with a CA the API
// server trusts through the registration's caBundle.
type certIssuer interface {
	IssueServingCert(hosts ...string) (certPEM, keyPEM []byte, err error)
	CAPEM() []byte
}

// admissionServer is the webhook server's address and the registration
// that points the API server at it.
type admissionServer struct {
	server webhook.Server
	url    string
	caPEM  []byte
}

// newAdmissionServer writes a fresh serving certificate for 127.0.0.1 and
// builds a webhook server on a free loopback port.
func newAdmissionServer(stateDir string, issuer certIssuer) (*admissionServer, error) {
	certPEM, keyPEM, err := issuer.IssueServingCert("127.0.0.1", "localhost")
	if err != nil {
		return nil, fmt.Errorf("issue webhook certificate: %w", err)
	}
	dir := filepath.Join(stateDir, "webhook")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("webhook cert dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o600); err != nil {
		return nil, fmt.Errorf("write webhook cert: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), keyPEM, 0o600); err != nil {
		return nil, fmt.Errorf("write webhook key: %w", err)
	}
	port, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	// HTTP/1.1 only: the API server's idle connection then closes at once
	// when knit dev stops, where an HTTP/2 one held every exit (and so
	// every restart) for a second.
	http1 := func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir, TLSOpts: []func(*tls.Config){http1}})
	return &admissionServer{server: srv, url: "https://127.0.0.1:" + strconv.Itoa(port), caPEM: issuer.CAPEM()}, nil
}

// register waits until the webhook server answers, then points the API
// server at it; registering earlier would fail every write in between.
func (a *admissionServer) register(ctx context.Context, c client.Client) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return a.server.StartedChecker()(nil) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("webhook server did not start: %w", err)
	}
	mutating, validating := a.configurations()
	if err := applyObject(ctx, c, mutating); err != nil {
		return err
	}
	return applyObject(ctx, c, validating)
}

// unregister removes the registrations so an API server that outlives
// knit dev (with --kubeconfig) does not refuse every write to a dead URL.
func (a *admissionServer) unregister(ctx context.Context, c client.Client) error {
	mutating, validating := a.configurations()
	if err := client.IgnoreNotFound(c.Delete(ctx, mutating)); err != nil {
		return fmt.Errorf("delete %s: %w", mutating.Name, err)
	}
	if err := client.IgnoreNotFound(c.Delete(ctx, validating)); err != nil {
		return fmt.Errorf("delete %s: %w", validating.Name, err)
	}
	return nil
}

func (a *admissionServer) configurations() (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	return webhooks.Configurations(func(path string) admissionregistrationv1.WebhookClientConfig {
		url := a.url + path
		return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: a.caPEM}
	})
}

// freeLoopbackPort asks the kernel for a port nobody listens on.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
