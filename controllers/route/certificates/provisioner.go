package certificates

import (
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/internal/acme"
)

// State is where a Route's certificate stands.
type State int

const (
	// Pending: being obtained; nothing of the Route's own serves yet, or
	// an older certificate does.
	Pending State = iota
	// Ready: a certificate for every host, not due for renewal.
	Ready
	// Failed: the last attempt failed; the next waits until RecheckAfter.
	Failed
)

// Outcome is what Ensure tells the Route reconciler.
type Outcome struct {
	State State
	// Secret is the certificate's Secret, namespace/name.
	Secret string
	// Reason and Message explain Pending and Failed, for the Route's
	// CertificateProvisioned condition.
	Reason, Message string
	// RecheckAfter is when to reconcile again: the renewal, or the next
	// attempt after a failure. 0: when woken.
	RecheckAfter time.Duration
}

// Options configure a Provisioner.
type Options struct {
	// Kind is what the certificates are for, lower case ("route",
	// "domainmapping"): the first part of their Secrets' names, so two
	// kinds' Provisioners never share a Secret. "" is "route".
	Kind string
	// Object is the object Wake delivers for namespace/name; nil
	// delivers Routes.
	Object func(namespace, name string) client.Object
	// Ingress is the ingress's plain-HTTP URL as the controller reaches
	// it, where a published challenge response is checked before the CA
	// is told to validate; "" skips the check.
	Ingress string
	// Log records attempts and their outcomes.
	Log logr.Logger
}

// Provisioner obtains the certificates of one kind's objects (Routes, or
// DomainMappings) in the background.
type Provisioner struct {
	kind   string
	object func(namespace, name string) client.Object
	client client.Client
	reader client.Reader
	solver *solver
	log    logr.Logger
	wake   chan event.GenericEvent
	now    func() time.Time

	mu       sync.Mutex
	attempts map[string]*attempt // by Route, namespace/name
}

// attempt is the last or running attempt for one Route's hosts.
type attempt struct {
	hosts    string
	running  bool
	err      error
	failures int
	retryAt  time.Time
}

// New returns a Provisioner writing through c and reading Secrets
// uncached through reader (knit-system's Secrets are no cache's).
func New(c client.Client, reader client.Reader, opts Options) *Provisioner {
	check := &http.Client{Timeout: 5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if opts.Kind == "" {
		opts.Kind = "route"
	}
	if opts.Object == nil {
		opts.Object = func(namespace, name string) client.Object {
			return &servingv1.Route{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		}
	}
	return &Provisioner{
		kind: opts.Kind, object: opts.Object,
		client: c, reader: reader, log: opts.Log, now: time.Now,
		solver:   &solver{client: c, ingress: opts.Ingress, http: check},
		wake:     make(chan event.GenericEvent, 64),
		attempts: map[string]*attempt{},
	}
}

// Wake delivers the object (a Route unless Options.Object says
// otherwise) when an attempt for it ends.
func (p *Provisioner) Wake() <-chan event.GenericEvent { return p.wake }

// obtainTimeout bounds one attempt.
const obtainTimeout = 5 * time.Minute

// Ensure reports the certificate of owner (a Route or DomainMapping) for
// hosts, starting an attempt when there is none, it is due for renewal,
// or the hosts changed.
func (p *Provisioner) Ensure(ctx context.Context, owner client.Object, hosts []string, cfg config.ACME) (Outcome, error) {
	namespace, name := owner.GetNamespace(), owner.GetName()
	key := namespace + "/" + name
	secret := config.SystemNamespace + "/" + SecretName(p.kind, namespace, name)
	current, err := p.held(ctx, namespace, name)
	if err != nil {
		return Outcome{}, err
	}
	now := p.now()
	if current != nil && current.covers(hosts) && now.Before(current.renewAt()) {
		return Outcome{State: Ready, Secret: secret, RecheckAfter: current.renewAt().Sub(now)}, nil
	}
	meanwhile := "no certificate serves its hosts yet"
	if current != nil && current.valid(now) {
		meanwhile = describe(current) + " serves meanwhile"
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.attempts[key]
	want := hostsKey(hosts)
	switch {
	case a != nil && a.hosts == want && a.running:
		return Outcome{State: Pending, Secret: secret, Reason: servingv1.ReasonCertificateNotReady,
			Message: "obtaining a certificate from " + cfg.Directory + "; " + meanwhile}, nil
	case a != nil && a.hosts == want && a.err != nil && now.Before(a.retryAt):
		return Outcome{State: Failed, Secret: secret, Reason: reasonOf(a.err),
			Message:      fmt.Sprintf("%v; %s; next attempt at %s", a.err, meanwhile, a.retryAt.UTC().Format(time.RFC3339)),
			RecheckAfter: a.retryAt.Sub(now)}, nil
	}
	failures := 0
	if a != nil && a.hosts == want {
		failures = a.failures
	}
	p.attempts[key] = &attempt{hosts: want, running: true, failures: failures}
	go p.obtain(namespace, name, hosts, cfg)
	return Outcome{State: Pending, Secret: secret, Reason: servingv1.ReasonCertificateNotReady,
		Message: "obtaining a certificate from " + cfg.Directory + "; " + meanwhile}, nil
}

// held reads the certificate Secret of namespace/name; nil when it holds
// none.
func (p *Provisioner) held(ctx context.Context, namespace, name string) (*held, error) {
	s := &corev1.Secret{}
	err := p.reader.Get(ctx, types.NamespacedName{Namespace: config.SystemNamespace, Name: SecretName(p.kind, namespace, name)}, s)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get the certificate Secret of %s %s/%s: %w", p.kind, namespace, name, err)
	}
	return parseHeld(s), nil
}

// obtain runs one attempt, stores its certificate, records how it went
// and wakes the owner.
func (p *Provisioner) obtain(namespace, name string, hosts []string, cfg config.ACME) {
	ctx, cancel := context.WithTimeout(context.Background(), obtainTimeout)
	defer cancel()
	log := p.log.WithValues(p.kind, namespace+"/"+name, "hosts", hosts)
	log.Info("Obtaining a certificate", "ca", cfg.Directory)
	err := p.obtainAndStore(ctx, namespace, name, hosts, cfg, log)

	p.mu.Lock()
	a := p.attempts[namespace+"/"+name]
	if a != nil && a.hosts == hostsKey(hosts) {
		a.running, a.err = false, err
		if err != nil {
			a.failures++
			a.retryAt = p.now().Add(backoff(a.failures, err))
		} else {
			a.failures = 0
		}
	}
	p.mu.Unlock()
	if err != nil {
		log.Error(err, "Obtaining a certificate failed")
	}
	p.wake <- event.GenericEvent{Object: p.object(namespace, name)}
}

func (p *Provisioner) obtainAndStore(ctx context.Context, namespace, name string, hosts []string, cfg config.ACME, log logr.Logger) error {
	issuer, err := p.issuer(ctx, cfg, log)
	if err != nil {
		return err
	}
	c, err := issuer.Obtain(ctx, hosts, p.solver)
	if err != nil {
		return err
	}
	if err := p.store(ctx, certificateSecret(p.kind, namespace, name, c)); err != nil {
		return err
	}
	log.Info("Obtained a certificate", "notAfter", c.NotAfter, "renewAt", c.RenewAt())
	return nil
}

// issuer is an Issuer for cfg with knit's account key.
func (p *Provisioner) issuer(ctx context.Context, cfg config.ACME, log logr.Logger) (*acme.Issuer, error) {
	key, err := p.accountKey(ctx)
	if err != nil {
		return nil, err
	}
	client := http.DefaultClient
	if len(cfg.CABundle) > 0 {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(cfg.CABundle)
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	}
	return &acme.Issuer{DirectoryURL: cfg.Directory, HTTPClient: client, Key: key, Email: cfg.Email, Timeout: obtainTimeout, Log: log}, nil
}

// accountKey reads knit's ACME account key, making it on first use. Two
// controllers racing to make it keep the first one written.
func (p *Provisioner) accountKey(ctx context.Context) (crypto.Signer, error) {
	s := &corev1.Secret{}
	name := types.NamespacedName{Namespace: config.SystemNamespace, Name: accountSecret}
	err := p.reader.Get(ctx, name, s)
	if err == nil {
		return acme.ParseKey(s.Data[accountKeyKey])
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("get the ACME account Secret: %w", err)
	}
	key, err := acme.NewAccountKey()
	if err != nil {
		return nil, err
	}
	pemKey, err := acme.MarshalKey(key)
	if err != nil {
		return nil, err
	}
	s = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name}, Data: map[string][]byte{accountKeyKey: pemKey}}
	if err := p.client.Create(ctx, s); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return p.accountKey(ctx)
		}
		return nil, fmt.Errorf("create the ACME account Secret: %w", err)
	}
	return key, nil
}

// store creates or replaces a certificate Secret.
func (p *Provisioner) store(ctx context.Context, s *corev1.Secret) error {
	err := p.client.Create(ctx, s)
	if apierrors.IsAlreadyExists(err) {
		old := &corev1.Secret{}
		if err := p.reader.Get(ctx, client.ObjectKeyFromObject(s), old); err != nil {
			return fmt.Errorf("get certificate Secret %s: %w", s.Name, err)
		}
		old.Labels, old.Data, old.Type = s.Labels, s.Data, s.Type
		err = p.client.Update(ctx, old)
	}
	if err != nil {
		return fmt.Errorf("store certificate Secret %s: %w", s.Name, err)
	}
	return nil
}

// Release deletes the certificate of namespace/name, which no longer
// wants one (deleted, cluster-local, external-domain-tls off).
func (p *Provisioner) Release(ctx context.Context, namespace, name string) error {
	p.mu.Lock()
	delete(p.attempts, namespace+"/"+name)
	p.mu.Unlock()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: SecretName(p.kind, namespace, name)}}
	if err := p.client.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the certificate of %s %s/%s: %w", p.kind, namespace, name, err)
	}
	return nil
}

// backoff is the wait before the next attempt after failures in a row:
// what the CA asked for, else a minute doubling to an hour, so a CA's
// rate limits are never hammered.
func backoff(failures int, err error) time.Duration {
	var ae *acme.Error
	if errors.As(err, &ae) && ae.RetryAfter > 0 {
		return ae.RetryAfter
	}
	d := time.Minute << min(failures-1, 6)
	return min(d, time.Hour)
}

// reasonOf is the condition reason of a failed attempt.
func reasonOf(err error) string {
	var ae *acme.Error
	if errors.As(err, &ae) {
		return ae.Reason
	}
	return "CertificateProvisionFailed"
}
