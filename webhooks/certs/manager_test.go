//go:build !unit

package certs_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/internal/testapi"
	"github.com/knitops/knit/webhooks"
	"github.com/knitops/knit/webhooks/certs"
)

const (
	namespace = "knit-system"
	service   = "knit-webhook"
	secret    = "knit-webhook-certs"
)

// startAPI runs a real kube-apiserver and installs knit's webhook
// configurations as the chart does: a Service reference, no caBundle.
func startAPI(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(testapi.StartT(t), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		t.Fatal(err)
	}
	mutating, validating := webhooks.Configurations(func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: namespace, Name: service, Path: &path}}
	})
	for _, obj := range []client.Object{mutating, validating} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func newManager(t *testing.T, c client.Client, clock func() time.Time) *certs.Manager {
	t.Helper()
	m, err := certs.New(certs.Options{
		Client: c, Namespace: namespace, Service: service, Secret: secret,
		Mutating: []string{webhooks.DefaultingName}, Validating: []string{webhooks.ValidationName},
		Validity: 90 * 24 * time.Hour, Now: clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// caBundles are the caBundles of every webhook knit registers.
func caBundles(t *testing.T, c client.Client) [][]byte {
	t.Helper()
	ctx := context.Background()
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(ctx, types.NamespacedName{Name: webhooks.DefaultingName}, m); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, types.NamespacedName{Name: webhooks.ValidationName}, v); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, w := range m.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	for _, w := range v.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	return out
}

// handshake serves m's certificate over TLS on loopback and connects as
// the API server would: trusting caBundle, asking for the Service's name.
func handshake(t *testing.T, m *certs.Manager, caBundle []byte) error {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{GetCertificate: m.GetCertificate})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			_ = conn.(*tls.Conn).Handshake()
			conn.Close()
		}
	}()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caBundle)
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ln.Addr().String(),
		&tls.Config{RootCAs: roots, ServerName: service + "." + namespace + ".svc"})
	if err != nil {
		return err
	}
	return conn.Close()
}

func TestReplicasShareOneCertificateTheAPIServerTrusts(t *testing.T) {
	c := startAPI(t)
	ctx := context.Background()
	replicas := []*certs.Manager{newManager(t, c, time.Now), newManager(t, c, time.Now)}
	if err := replicas[0].ReadyCheck(nil); err == nil {
		t.Fatal("ready before any certificate was loaded")
	}
	var wg sync.WaitGroup
	errs := make([]error, len(replicas))
	for i, m := range replicas {
		wg.Go(func() { errs[i] = m.Sync(ctx) }) // both start at once, as a rollout does
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
	}
	s := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: secret}, s); err != nil {
		t.Fatalf("the certificate Secret: %v", err)
	}
	ca := s.Data[certs.CACertKey]
	for i, b := range caBundles(t, c) {
		if !bytes.Equal(b, ca) {
			t.Errorf("webhook %d caBundle is not the Secret's CA", i)
		}
	}
	for i, m := range replicas {
		if err := m.ReadyCheck(nil); err != nil {
			t.Errorf("replica %d not ready: %v", i, err)
		}
		if err := handshake(t, m, ca); err != nil {
			t.Errorf("replica %d: TLS as the API server sees it: %v", i, err)
		}
	}
}

func TestRotationBeforeExpiryKeepsOldCertificatesTrusted(t *testing.T) {
	c := startAPI(t)
	ctx := context.Background()
	start := time.Now()
	early := newManager(t, c, func() time.Time { return start })
	if err := early.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	first := caBundles(t, c)[0]

	// 61 of 90 days later: less than a third of the validity is left.
	late := newManager(t, c, func() time.Time { return start.Add(61 * 24 * time.Hour) })
	if err := late.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	rotated := caBundles(t, c)[0]
	if bytes.Equal(rotated, first) {
		t.Fatal("caBundle unchanged 61 days into a 90-day certificate, want a rotation")
	}
	if !bytes.Contains(rotated, first) {
		t.Error("the rotated caBundle no longer trusts the previous CA: replicas not yet rotated would fail admission")
	}
	// A replica that has not synced since still serves the old certificate,
	// and the API server, holding the new caBundle, still trusts it.
	if err := handshake(t, early, rotated); err != nil {
		t.Errorf("old certificate under the rotated caBundle: %v", err)
	}
	s := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: secret}, s); err != nil {
		t.Fatal(err)
	}
	if err := certs.FromData(s.Data).Check(start.Add(61*24*time.Hour), 29*24*time.Hour, certs.ServiceNames(service, namespace)); err != nil {
		t.Errorf("the rotated certificate, 61 days in: %v", err)
	}
	// Syncing again with the same clock changes nothing.
	if err := late.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if again := caBundles(t, c)[0]; !bytes.Equal(again, rotated) {
		t.Error("a second sync rotated again")
	}
}
