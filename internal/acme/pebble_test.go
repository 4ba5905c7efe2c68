//go:build !unit

// The tests against a real Pebble, which `make tools` builds into ./bin:
// `go test -tags unit` (make test-unit) leaves them out.

package acme_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/knitops/knit/internal/acme"
	"github.com/knitops/knit/internal/acme/acmetest"
)

// obtainTimeout bounds one Obtain against Pebble, which validates and
// issues in well under a second.
const obtainTimeout = time.Minute

// issuer is an Issuer with a fresh account at p.
func issuer(t *testing.T, p *acmetest.Pebble) *acme.Issuer {
	t.Helper()
	key, err := acme.NewAccountKey()
	if err != nil {
		t.Fatal(err)
	}
	return &acme.Issuer{
		DirectoryURL: p.DirectoryURL, HTTPClient: p.HTTPClient, Key: key,
		Email: "ops@example.com", Timeout: obtainTimeout, Log: testr.New(t),
	}
}

func obtain(t *testing.T, iss *acme.Issuer, hosts []string, s acme.Solver) (*acme.Certificate, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), obtainTimeout)
	defer cancel()
	began := time.Now()
	cert, err := iss.Obtain(ctx, hosts, s)
	t.Logf("Obtain(%v) took %s", hosts, time.Since(began).Round(time.Millisecond))
	return cert, err
}

func TestObtainIssuesACertificateThePebbleRootVerifies(t *testing.T) {
	p := acmetest.StartPebble(t)
	r := &acmetest.Responder{}
	p.Serve(t, r)
	hosts := []string{"hello.default.example.com", "Hello.Default.SVC.example.com."}
	want := []string{"hello.default.example.com", "hello.default.svc.example.com"}

	cert, err := obtain(t, issuer(t, p), hosts, r)
	if err != nil {
		t.Fatalf("Obtain: %v", err)
	}
	if !slices.Equal(cert.Hosts, want) {
		t.Errorf("Hosts = %v, want %v", cert.Hosts, want)
	}
	chain := parseChain(t, cert.ChainPEM)
	leaf := chain[0]
	intermediates := x509.NewCertPool()
	for _, c := range chain[1:] {
		intermediates.AddCert(c)
	}
	roots := p.Roots(t)
	for _, h := range want {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: h, Roots: roots, Intermediates: intermediates}); err != nil {
			t.Errorf("the chain does not verify for %s against pebble's root: %v", h, err)
		}
	}
	key := certificateKey(t, cert)
	if !key.PublicKey.Equal(leaf.PublicKey) {
		t.Error("KeyPEM is not the leaf's key")
	}
	if !cert.NotBefore.Equal(leaf.NotBefore) || !cert.NotAfter.Equal(leaf.NotAfter) {
		t.Errorf("validity %s–%s, the leaf's is %s–%s", cert.NotBefore, cert.NotAfter, leaf.NotBefore, leaf.NotAfter)
	}
	if got := r.Presented(); len(got) != 2 {
		t.Errorf("presented %v, want one challenge per host", got)
	}
	if live := r.Live(); len(live) != 0 {
		t.Errorf("challenge responses still published for %v", live)
	}
}

func TestObtainAgainKeepsTheAccountAndMintsANewKey(t *testing.T) {
	p := acmetest.StartPebble(t)
	r := &acmetest.Responder{}
	p.Serve(t, r)
	iss := issuer(t, p)

	first, err := obtain(t, iss, []string{"first.default.example.com"}, r)
	if err != nil {
		t.Fatalf("first Obtain: %v", err)
	}
	// The account exists now: Register answers 200, which Obtain takes
	// as finding it.
	second, err := obtain(t, iss, []string{"second.default.example.com"}, r)
	if err != nil {
		t.Fatalf("second Obtain with the same account: %v", err)
	}
	if certificateKey(t, first).Equal(certificateKey(t, second)) {
		t.Error("two certificates share a private key")
	}
	if certificateKey(t, second).Equal(iss.Key) {
		t.Error("the certificate's key is the account key")
	}
}

func TestChallengeFailureSaysWhy(t *testing.T) {
	const host = "broken.default.example.com"
	cases := []struct {
		name string
		// serve sets up what answers on the HTTP-01 port.
		serve func(t *testing.T, p *acmetest.Pebble, r *acmetest.Responder)
		// detail is in the CA's words.
		detail string
	}{{
		name: "wrong body",
		serve: func(t *testing.T, p *acmetest.Pebble, r *acmetest.Responder) {
			r.Answer = "not the key authorization"
			p.Serve(t, r)
		},
		detail: "did not match",
	}, {
		name: "nothing listening",
		serve: func(t *testing.T, p *acmetest.Pebble, _ *acmetest.Responder) {
			if err := p.HTTP01.Close(); err != nil {
				t.Fatal(err)
			}
		},
		detail: "connection refused",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := acmetest.StartPebble(t)
			r := &acmetest.Responder{}
			tc.serve(t, p, r)

			cert, err := obtain(t, issuer(t, p), []string{host}, r)
			var e *acme.Error
			if !errors.As(err, &e) {
				t.Fatalf("Obtain = %v, %v; want an *acme.Error", cert, err)
			}
			t.Logf("message: %s", e)
			if e.Reason != acme.ReasonChallengeFailed || e.Host != host {
				t.Errorf("Reason %q Host %q, want %q %q", e.Reason, e.Host, acme.ReasonChallengeFailed, host)
			}
			if !strings.Contains(e.Detail, tc.detail) {
				t.Errorf("Detail %q does not say %q", e.Detail, tc.detail)
			}
			if !strings.HasPrefix(e.Error(), "HTTP-01 challenge for "+host+" failed: ") {
				t.Errorf("message %q does not start with what failed", e.Error())
			}
			if live := r.Live(); len(live) != 0 {
				t.Errorf("challenge responses still published after the failure for %v", live)
			}
		})
	}
}

func TestShortLivedCertificateRenewsAt(t *testing.T) {
	const validity = 5 * time.Minute
	p := acmetest.StartPebble(t, acmetest.WithValidity(validity))
	r := &acmetest.Responder{}
	p.Serve(t, r)

	cert, err := obtain(t, issuer(t, p), []string{"brief.default.example.com"}, r)
	if err != nil {
		t.Fatalf("Obtain: %v", err)
	}
	life := cert.NotAfter.Sub(cert.NotBefore)
	// Pebble's NotAfter is NotBefore+validity-1s.
	if life < validity-time.Second || life > validity {
		t.Fatalf("lifetime %s, want %s (pebble's validityPeriod not honoured?)", life, validity)
	}
	renew := cert.RenewAt()
	if !renew.After(cert.NotBefore) || !renew.Before(cert.NotAfter) {
		t.Fatalf("RenewAt %s outside the lifetime %s–%s", renew, cert.NotBefore, cert.NotAfter)
	}
	if got, want := renew.Sub(cert.NotBefore), life*2/3; got < want-time.Second || got > want+time.Second {
		t.Errorf("renews %s into a %s lifetime, want %s (two thirds)", got, life, want)
	}
}

func TestRejectedNameSaysWhichAndWhy(t *testing.T) {
	cases := []struct {
		name   string
		hosts  []string
		host   string
		detail string
	}{{
		name:   "blocked by the CA's policy",
		hosts:  []string{"fine.default.example.com", "www.blocked.example"},
		host:   "www.blocked.example",
		detail: "forbidden by policy",
	}, {
		name:   "an IP literal as a DNS name",
		hosts:  []string{"127.0.0.1"},
		host:   "127.0.0.1",
		detail: "IP address",
	}}
	p := acmetest.StartPebble(t, acmetest.WithBlockedDomains("blocked.example"))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &acmetest.Responder{}
			_, err := obtain(t, issuer(t, p), tc.hosts, r)
			var e *acme.Error
			if !errors.As(err, &e) {
				t.Fatalf("Obtain = %v; want an *acme.Error", err)
			}
			t.Logf("message: %s", e)
			if e.Reason != acme.ReasonRejected || e.Host != tc.host || !strings.Contains(e.Detail, tc.detail) {
				t.Errorf("got Reason %q Host %q Detail %q; want %q, %q, a detail saying %q",
					e.Reason, e.Host, e.Detail, acme.ReasonRejected, tc.host, tc.detail)
			}
			if got := r.Presented(); len(got) != 0 {
				t.Errorf("presented %v for an order the CA refused", got)
			}
		})
	}
}

func parseChain(t *testing.T, data []byte) []*x509.Certificate {
	t.Helper()
	var chain []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		chain = append(chain, c)
	}
	if len(chain) < 2 {
		t.Fatalf("chain of %d certificates, want the leaf and an intermediate", len(chain))
	}
	return chain
}

// certificateKey is cert's key, which must be a fresh ECDSA P-256 key.
func certificateKey(t *testing.T, cert *acme.Certificate) *ecdsa.PrivateKey {
	t.Helper()
	k, err := acme.ParseKey(cert.KeyPEM)
	if err != nil {
		t.Fatalf("KeyPEM: %v", err)
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		t.Fatalf("certificate key is %T, want ECDSA P-256", k)
	}
	return ec
}

// faultySolver is a Responder whose second Present fails or cancels,
// and which records the Present and CleanUp calls, and whether CleanUp's
// context was still live.
type faultySolver struct {
	*acmetest.Responder
	fault func() error

	mu                 sync.Mutex
	presented, cleaned []string
}

func (f *faultySolver) Present(ctx context.Context, host, token, keyAuth string) error {
	f.mu.Lock()
	f.presented = append(f.presented, host)
	second := len(f.presented) == 2
	f.mu.Unlock()
	if second {
		if err := f.fault(); err != nil {
			return err
		}
	}
	return f.Responder.Present(ctx, host, token, keyAuth)
}

func (f *faultySolver) CleanUp(ctx context.Context, host, token string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ctx.Err() != nil {
		return fmt.Errorf("CleanUp(%s) called with an ended context: %w", host, ctx.Err())
	}
	f.cleaned = append(f.cleaned, host)
	return f.Responder.CleanUp(ctx, host, token)
}

func TestEveryPresentedChallengeIsWithdrawn(t *testing.T) {
	hosts := []string{"one.default.example.com", "two.default.example.com"}
	errPublish := errors.New("the ingress refused the route")
	cases := []struct {
		name string
		// fault is what the second Present does; cancel ends Obtain's
		// context.
		fault func(cancel context.CancelFunc) error
		want  error
	}{
		{"Present fails", func(context.CancelFunc) error { return errPublish }, errPublish},
		{"the caller gives up", func(cancel context.CancelFunc) error { cancel(); return nil }, context.Canceled},
	}
	p := acmetest.StartPebble(t)
	r := &acmetest.Responder{}
	p.Serve(t, r)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), obtainTimeout)
			defer cancel()
			f := &faultySolver{Responder: r, fault: func() error { return tc.fault(cancel) }}
			_, err := issuer(t, p).Obtain(ctx, hosts, f)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Obtain = %v, want an error wrapping %v", err, tc.want)
			}
			var e *acme.Error
			if errors.As(err, &e) {
				t.Errorf("Obtain = %#v: not the CA's doing, so not an *acme.Error", e)
			}
			t.Logf("error: %v", err)
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.presented) != 2 || !slices.Equal(f.cleaned, f.presented) {
				t.Errorf("CleanUp called for %v, want every host presented: %v", f.cleaned, f.presented)
			}
			if live := r.Live(); len(live) != 0 {
				t.Errorf("challenge responses still published for %v", live)
			}
		})
	}
}
