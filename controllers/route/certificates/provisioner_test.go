//go:build !unit

package certificates

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/knitops/knit/api"
	netv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/dataplane/ingress"
	"github.com/knitops/knit/internal/acme"
	"github.com/knitops/knit/internal/acme/acmetest"
	"github.com/knitops/knit/internal/testapi"
)

// fixture is a real API server, knit's real ingress serving Pebble's
// HTTP-01 port from it, and a Provisioner whose challenge responses the
// ingress serves.
type fixture struct {
	c      client.Client
	pebble *acmetest.Pebble
	p      *Provisioner
	cfg    config.ACME
}

func start(t *testing.T, opts ...acmetest.Option) *fixture {
	t.Helper()
	pebble := acmetest.StartPebble(t, append(opts, acmetest.WithBlockedDomains("blocked.test"))...)
	restCfg := testapi.StartT(t, filepath.Join("..", "..", "..", "charts", "knit", "crds"))
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.SystemNamespace}}); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{Scheme: scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	router := ingress.NewRouter()
	if err := ingress.SetupWithManager(mgr, router); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	pebble.Serve(t, router)
	ingressURL := "http://" + pebble.HTTP01.Addr().String()
	p := New(c, c, Options{Ingress: ingressURL, Log: logr.Discard()})
	return &fixture{c: c, pebble: pebble, p: p, cfg: config.ACME{Directory: pebble.DirectoryURL, CABundle: pebble.CABundle}}
}

func route(namespace, name string) *servingv1.Route {
	return &servingv1.Route{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
}

// ensure asks until the attempt started by the first ask has ended.
func (f *fixture) ensure(t *testing.T, rt *servingv1.Route, hosts ...string) Outcome {
	t.Helper()
	ctx := context.Background()
	out, err := f.p.Ensure(ctx, rt, hosts, f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out.State != Pending {
		return out
	}
	select {
	case ev := <-f.p.Wake():
		if ev.Object.GetName() != rt.Name || ev.Object.GetNamespace() != rt.Namespace {
			t.Fatalf("woke %s/%s, want %s/%s", ev.Object.GetNamespace(), ev.Object.GetName(), rt.Namespace, rt.Name)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("no attempt for %v ended within 2m (%+v)", hosts, out)
	}
	if out, err = f.p.Ensure(ctx, rt, hosts, f.cfg); err != nil {
		t.Fatal(err)
	}
	return out
}

// secret reads the certificate Secret of namespace/name and verifies its
// chain against Pebble's root for every host.
func (f *fixture) secret(t *testing.T, namespace, name string, hosts ...string) (*corev1.Secret, *x509.Certificate) {
	t.Helper()
	s := &corev1.Secret{}
	if err := f.c.Get(context.Background(), types.NamespacedName{Namespace: config.SystemNamespace, Name: SecretName("route", namespace, name)}, s); err != nil {
		t.Fatal(err)
	}
	block, rest := pem.Decode(s.Data[corev1.TLSCertKey])
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	inter := x509.NewCertPool()
	inter.AppendCertsFromPEM(rest)
	for _, h := range hosts {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: h, Roots: f.pebble.Roots(t), Intermediates: inter}); err != nil {
			t.Errorf("the certificate for %s does not verify against Pebble's root: %v", h, err)
		}
	}
	return s, leaf
}

// A Route's hosts get a certificate from the ACME CA, validated over
// HTTP-01 through knit's real ingress, stored in knit-system for that
// namespace alone; every challenge response is withdrawn; asked again
// it is Ready until its renewal time, when a new one replaces it; a
// release deletes it.
func TestProvisionerObtainsRenewsAndReleases(t *testing.T) {
	f := start(t, acmetest.WithValidity(time.Hour))
	rt := route("team-a", "hello")
	hosts := []string{"hello.team-a.example.test", "old-hello.team-a.example.test"}

	out := f.ensure(t, rt, hosts...)
	if out.State != Ready || out.Secret != "knit-system/route.team-a.hello" || out.RecheckAfter <= 0 || out.RecheckAfter > 41*time.Minute {
		t.Fatalf("after the attempt: %+v, want Ready, renewing within 2/3 of an hour", out)
	}
	s, first := f.secret(t, "team-a", "hello", hosts...)
	if s.Type != corev1.SecretTypeTLS || s.Labels[netv1alpha1.CertificateLabel] == "" || s.Labels[netv1alpha1.CertificateNamespaceLabel] != "team-a" {
		t.Errorf("certificate Secret: type %s, labels %v", s.Type, s.Labels)
	}
	challenges := &corev1.SecretList{}
	if err := f.c.List(context.Background(), challenges, client.InNamespace(config.SystemNamespace),
		client.MatchingLabels{netv1alpha1.CertificateLabel: netv1alpha1.CertificateLabelChallenge}); err != nil || len(challenges.Items) != 0 {
		t.Errorf("challenge responses left behind: %d, %v", len(challenges.Items), err)
	}

	f.p.now = func() time.Time { return first.NotBefore.Add(50 * time.Minute) } // past 2/3 of its hour
	if out, err := f.p.Ensure(context.Background(), rt, hosts, f.cfg); err != nil || out.State != Pending ||
		!strings.Contains(out.Message, "serves meanwhile") {
		t.Fatalf("at renewal time: %+v, %v; want Pending, the old certificate serving meanwhile", out, err)
	}
	<-f.p.Wake()
	f.p.now = time.Now // the attempt has ended: nothing reads the clock
	out = f.ensure(t, rt, hosts...)
	_, renewed := f.secret(t, "team-a", "hello", hosts...)
	if out.State != Ready || renewed.SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Errorf("at renewal time: %+v, serial %s (was %s), want a new certificate", out, renewed.SerialNumber, first.SerialNumber)
	}

	if err := f.p.Release(context.Background(), "team-a", "hello"); err != nil {
		t.Fatal(err)
	}
	err := f.c.Get(context.Background(), types.NamespacedName{Namespace: config.SystemNamespace, Name: SecretName("route", "team-a", "hello")}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("after Release: %v, want the Secret gone", err)
	}
}

// A name the CA refuses fails with the CA's reason and words and the
// time of the next attempt; asking before then starts no attempt.
func TestProvisionerSaysWhyItFailed(t *testing.T) {
	f := start(t)
	rt := route("default", "shop")
	out := f.ensure(t, rt, "shop.blocked.test")
	if out.State != Failed || out.Reason != acme.ReasonRejected || !strings.Contains(out.Message, "shop.blocked.test") ||
		!strings.Contains(out.Message, "no certificate serves its hosts yet; next attempt at") || out.RecheckAfter <= 0 {
		t.Fatalf("a refused name: %+v", out)
	}
	again, err := f.p.Ensure(context.Background(), rt, []string{"shop.blocked.test"}, f.cfg)
	if err != nil || again.State != Failed {
		t.Errorf("asked again before the next attempt: %+v, %v; want Failed still", again, err)
	}
	select {
	case <-f.p.Wake():
		t.Error("an attempt ran before its time")
	case <-time.After(200 * time.Millisecond):
	}
}
