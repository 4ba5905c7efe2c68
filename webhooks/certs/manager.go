package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Defaults of Options.
const (
	DefaultValidity = 90 * 24 * time.Hour
	DefaultInterval = 10 * time.Minute
)

// Options say where the certificate lives and whom it is for.
type Options struct {
	// Client reads and writes the Secret and the webhook configurations;
	// an uncached client (the manager's API reader is not enough: it
	// writes), so a replica never acts on a stale Secret.
	Client client.Client
	// Namespace and Service name the webhook Service the API server calls.
	Namespace, Service string
	// Secret is the Secret in Namespace that holds the Bundle.
	Secret string
	// Mutating and Validating name the webhook configurations whose
	// caBundle must trust the CA.
	Mutating, Validating []string
	// Validity of a new CA and certificate; DefaultValidity when 0.
	Validity time.Duration
	// Interval between checks; DefaultInterval when 0. A certificate is
	// rotated when it would expire within a third of Validity.
	Interval time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Log receives rotations and errors.
	Log logr.Logger
}

// Manager keeps the webhook's certificate current: it loads or creates the
// Secret, rotates it ahead of expiry, serves it to the webhook server
// through GetCertificate, and patches the caBundle of the configurations.
// Every controller replica runs one (the webhook server runs on all of
// them); writes are optimistic, so two replicas starting together agree
// on one Secret.
type Manager struct {
	opts  Options
	names []string
	cert  atomic.Pointer[tls.Certificate]
	ready atomic.Bool
}

// New checks opts and fills defaults.
func New(opts Options) (*Manager, error) {
	if opts.Client == nil || opts.Namespace == "" || opts.Service == "" || opts.Secret == "" {
		return nil, errors.New("webhook certificates: Client, Namespace, Service and Secret are required")
	}
	if opts.Validity <= 0 {
		opts.Validity = DefaultValidity
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Manager{opts: opts, names: ServiceNames(opts.Service, opts.Namespace)}, nil
}

// Start checks at once and then every Interval until ctx ends; a failed
// check is retried sooner, with backoff.
func (m *Manager) Start(ctx context.Context) error {
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 8, Cap: m.opts.Interval}
	for {
		next := m.opts.Interval
		if err := m.Sync(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			next = backoff.Step()
			m.opts.Log.Error(err, "Webhook certificate not ready; retrying", "in", next)
		} else {
			backoff = wait.Backoff{Duration: time.Second, Factor: 2, Steps: 8, Cap: m.opts.Interval}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
	}
}

// NeedLeaderElection is false: every replica serves webhooks.
func (m *Manager) NeedLeaderElection() bool { return false }

// GetCertificate serves the current certificate to TLS handshakes.
func (m *Manager) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c := m.cert.Load()
	if c == nil {
		return nil, errors.New("webhook certificate not loaded yet")
	}
	return c, nil
}

// ReadyCheck fails until a certificate is served and the API server trusts
// it: a replica is not ready for admission before then.
func (m *Manager) ReadyCheck(*http.Request) error {
	if !m.ready.Load() {
		return errors.New("webhook certificate not loaded or caBundle not patched yet")
	}
	return nil
}

// Sync makes the Secret hold a valid bundle, loads it and patches the
// caBundles.
func (m *Manager) Sync(ctx context.Context) error {
	b, err := m.ensureSecret(ctx)
	if err != nil {
		return err
	}
	pair, err := tls.X509KeyPair(b.Cert, b.Key)
	if err != nil {
		return fmt.Errorf("load webhook certificate: %w", err)
	}
	m.cert.Store(&pair)
	if err := m.patchCABundles(ctx, b.CACert); err != nil {
		return err
	}
	m.ready.Store(true)
	return nil
}

// ensureSecret returns a bundle good for at least a third of Validity,
// creating or rotating the Secret when it is not. On a conflict with
// another replica it reads what that replica wrote.
func (m *Manager) ensureSecret(ctx context.Context) (Bundle, error) {
	key := types.NamespacedName{Namespace: m.opts.Namespace, Name: m.opts.Secret}
	margin := m.opts.Validity / 3
	for attempt := 0; attempt < 3; attempt++ {
		s := &corev1.Secret{}
		err := m.opts.Client.Get(ctx, key, s)
		if err != nil && !apierrors.IsNotFound(err) {
			return Bundle{}, fmt.Errorf("get Secret %s: %w", key, err)
		}
		found := err == nil
		have := FromData(s.Data)
		why := have.Check(m.opts.Now(), margin, m.names)
		if found && why == nil {
			return have, nil
		}
		b, err := Generate(m.opts.Now(), m.opts.Validity, m.names)
		if err != nil {
			return Bundle{}, err
		}
		b = b.WithPrevious(have.CACert, m.opts.Now())
		if found {
			m.opts.Log.Info("Rotating the webhook certificate", "secret", key, "reason", why.Error())
			s.Data = b.Data()
			err = m.opts.Client.Update(ctx, s)
		} else {
			m.opts.Log.Info("Creating the webhook certificate", "secret", key)
			s = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{"app.kubernetes.io/part-of": "knit"}},
				Type:       corev1.SecretTypeOpaque,
				Data:       b.Data(),
			}
			err = m.opts.Client.Create(ctx, s)
		}
		switch {
		case err == nil:
			return b, nil
		case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
			continue // another replica wrote first: use theirs
		default:
			return Bundle{}, fmt.Errorf("write Secret %s: %w", key, err)
		}
	}
	return Bundle{}, fmt.Errorf("Secret %s kept changing under us", key)
}

// patchCABundles points every webhook of the named configurations at ca,
// writing only what differs.
func (m *Manager) patchCABundles(ctx context.Context, ca []byte) error {
	for _, name := range m.opts.Mutating {
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := m.patch(ctx, name, cfg, ca, func() []*admissionregistrationv1.WebhookClientConfig {
			return clientConfigs(cfg.Webhooks, func(w *admissionregistrationv1.MutatingWebhook) *admissionregistrationv1.WebhookClientConfig {
				return &w.ClientConfig
			})
		}); err != nil {
			return err
		}
	}
	for _, name := range m.opts.Validating {
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := m.patch(ctx, name, cfg, ca, func() []*admissionregistrationv1.WebhookClientConfig {
			return clientConfigs(cfg.Webhooks, func(w *admissionregistrationv1.ValidatingWebhook) *admissionregistrationv1.WebhookClientConfig {
				return &w.ClientConfig
			})
		}); err != nil {
			return err
		}
	}
	return nil
}

// clientConfigs points at the client config of every webhook in ws.
func clientConfigs[W any](ws []W, of func(*W) *admissionregistrationv1.WebhookClientConfig) []*admissionregistrationv1.WebhookClientConfig {
	out := make([]*admissionregistrationv1.WebhookClientConfig, len(ws))
	for i := range ws {
		out[i] = of(&ws[i])
	}
	return out
}

// patch sets ca on every client config of the named configuration; a
// conflict (another replica patched first) reads again.
func (m *Manager) patch(ctx context.Context, name string, obj client.Object, ca []byte, clientConfigs func() []*admissionregistrationv1.WebhookClientConfig) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := m.opts.Client.Get(ctx, types.NamespacedName{Name: name}, obj); err != nil {
			return err
		}
		before := obj.DeepCopyObject().(client.Object)
		changed := false
		for _, cc := range clientConfigs() {
			if !bytes.Equal(cc.CABundle, ca) {
				cc.CABundle, changed = ca, true
			}
		}
		if !changed {
			return nil
		}
		m.opts.Log.Info("Patching the webhook caBundle", "configuration", name)
		return m.opts.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		return fmt.Errorf("patch caBundle of webhook configuration %s: %w", name, err)
	}
	return nil
}
