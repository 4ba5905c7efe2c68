//go:build !unit

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	netv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	servingv1beta1 "github.com/knitops/knit/api/serving/v1beta1"
	"github.com/knitops/knit/internal/acme/acmetest"
)

// TestHTTPSJourney: knit dev serves every Service over HTTPS with nothing
// to configure — a certificate from its own CA, kept in the state dir and
// named in the banner — and HTTP/2; a certificate Secret in knit-system
// takes over its host; a DomainMapping serves a domain of the user's own
// over HTTP and, with its spec.tls Secret, HTTPS; http-protocol Redirected on a Service sends plain
// HTTP to HTTPS on knit dev's HTTPS port; HTTP keeps working elsewhere.
func TestHTTPSJourney(t *testing.T) {
	d := startKnitDev(t, filepath.Join(t.TempDir(), "state"))
	c := d.client(t)
	const host = "hello.default.localhost"
	_, httpsPort, _ := net.SplitHostPort(d.httpsAddr)
	url := "https://" + host + ":" + httpsPort + "/"

	caPath := filepath.Join(d.stateDir, "ca", "ca.pem")
	if !strings.Contains(d.output.String(), "curl --cacert "+caPath+" "+url) {
		t.Errorf("the banner does not say how to trust %s:\n%s", caPath, d.output)
	}
	caPEM, err := os.ReadFile(caPath)
	if err != nil {
		t.Fatal(err)
	}
	localCA := x509.NewCertPool()
	localCA.AppendCertsFromPEM(caPEM)

	if out, err := d.kubectl(t, "apply", "-f", "examples/helloworld/service.yaml"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	waitBody(t, d.httpAddr, host, "Hello World!", 3*time.Minute)

	t.Run("knit dev's CA vouches for the Service over HTTP/2", func(t *testing.T) {
		got, err := httpsGet(d.httpsAddr, url, localCA)
		if err != nil || got != "200 HTTP/2.0 Hello World!" {
			t.Errorf("GET %s trusting knit dev's CA alone: %q, %v", url, got, err)
		}
	})

	t.Run("a certificate Secret in knit-system takes over its host", func(t *testing.T) {
		certPEM, keyPEM, own := selfSigned(t, host)
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "knit-system", Name: "hello-tls",
				Labels: map[string]string{"knit.dev/certificate": "", "knit.dev/certificate-namespace": "default"}},
			Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
		}
		if err := c.Create(context.Background(), secret); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the Secret's certificate served", time.Minute, func(context.Context) (bool, string) {
			got, err := httpsGet(d.httpsAddr, url, own)
			return err == nil && got == "200 HTTP/2.0 Hello World!", fmt.Sprintf("%q %v", got, err)
		})
	})

	t.Run("a DomainMapping serves a domain of its own, with its own certificate", func(t *testing.T) {
		const domain = "shop.example.org"
		ctx := context.Background()
		certPEM, keyPEM, own := selfSigned(t, domain)
		for _, obj := range []client.Object{
			&netv1alpha1.ClusterDomainClaim{ObjectMeta: metav1.ObjectMeta{Name: domain}, Spec: netv1alpha1.ClusterDomainClaimSpec{Namespace: "default"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "shop-tls"}, Type: corev1.SecretTypeTLS,
				Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM}},
			&servingv1beta1.DomainMapping{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: domain},
				Spec: servingv1beta1.DomainMappingSpec{
					Ref: servingv1beta1.KReference{APIVersion: "serving.knative.dev/v1", Kind: "Service", Name: "hello"},
					TLS: &servingv1beta1.SecretTLS{SecretName: "shop-tls"}}},
		} {
			if err := c.Create(ctx, obj); err != nil {
				t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
			}
		}
		mapped := "https://" + domain + ":" + httpsPort + "/"
		waitFor(t, "the DomainMapping Ready at "+mapped, time.Minute, func(ctx context.Context) (bool, string) {
			dm := &servingv1beta1.DomainMapping{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: domain}, dm); err != nil {
				return false, err.Error()
			}
			return dm.Status.IsReady() && dm.Status.URL == strings.TrimSuffix(mapped, "/"), fmt.Sprintf("%s %+v", dm.Status.URL, dm.Status.Conditions)
		})
		waitBody(t, d.httpAddr, domain, "Hello World!", time.Minute)
		waitFor(t, "the mapping's certificate served", time.Minute, func(context.Context) (bool, string) {
			got, err := httpsGet(d.httpsAddr, mapped, own)
			return err == nil && got == "200 HTTP/2.0 Hello World!", fmt.Sprintf("%q %v", got, err)
		})
	})

	t.Run("http-protocol Redirected sends HTTP to HTTPS", func(t *testing.T) {
		updateService(t, c, func(svc *servingv1.Service) {
			svc.Annotations = map[string]string{"networking.knative.dev/http-protocol": "Redirected"}
		})
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		waitFor(t, "301 to HTTPS", time.Minute, func(context.Context) (bool, string) {
			req, _ := http.NewRequest(http.MethodGet, "http://"+d.httpAddr+"/path?q=1", nil)
			req.Host = host
			resp, err := noFollow.Do(req)
			if err != nil {
				return false, err.Error()
			}
			resp.Body.Close()
			loc := resp.Header.Get("Location")
			return resp.StatusCode == http.StatusMovedPermanently && loc == "https://"+host+":"+httpsPort+"/path?q=1", resp.Status + " " + loc
		})
	})
}

// httpsGet fetches url over a new TLS connection to addr trusting roots
// alone: "<status code> <protocol> <body>".
func httpsGet(addr, url string, roots *x509.CertPool) (string, error) {
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Proto, strings.TrimSpace(string(body))), err
}

// selfSigned is a certificate for name, its key, and a pool trusting it.
func selfSigned(t *testing.T, name string) (certPEM, keyPEM []byte, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(leaf)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), pool
}

// TestACMEJourney is external-domain-tls against a real ACME CA (Pebble,
// its validations sent to knit dev's HTTP ingress): a Service gets a
// certificate the CA's root verifies, its URL turns https:// and it
// still answers over HTTP; a Service whose domain the CA refuses says why
// on its Route and keeps serving HTTP.
func TestACMEJourney(t *testing.T) {
	pebble := acmetest.StartPebble(t, acmetest.WithBlockedDomains("blocked.test"))
	httpAddr := pebble.HTTP01.Addr().String()
	pebble.HTTP01.Close() // knit dev's ingress takes the port the CA validates on
	d := startKnitDevOn(t, filepath.Join(t.TempDir(), "state"), httpAddr, freeAddr(t))
	c := d.client(t)
	_, httpsPort, _ := net.SplitHostPort(d.httpsAddr)
	ctx := context.Background()
	for name, data := range map[string]map[string]string{
		"config-domain": {"example.test": "", "blocked.test": "selector:\n  tls: blocked\n"},
		"config-network": {"external-domain-tls": "Enabled", "acme-directory": pebble.DirectoryURL,
			"acme-ca-bundle": string(pebble.CABundle)},
	} {
		// knit dev made it empty at start, as the chart installs it.
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "knit-system", Name: name}}
		if _, err := controllerutil.CreateOrUpdate(ctx, c, cm, func() error { cm.Data = data; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := d.kubectl(t, "apply", "-f", "examples/helloworld/service.yaml"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	const host = "hello.default.example.test"
	url := "https://" + host + ":" + httpsPort
	waitFor(t, "hello's certificate and https URL", 3*time.Minute, func(ctx context.Context) (bool, string) {
		rt := &servingv1.Route{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, rt); err != nil {
			return false, err.Error()
		}
		cond := rt.Status.GetCondition(servingv1.RouteConditionCertificateProvisioned)
		return cond.IsTrue() && rt.Status.URL == url, fmt.Sprintf("url %s, %+v", rt.Status.URL, cond)
	})
	if got, err := httpsGet(d.httpsAddr, url+"/", pebble.Roots(t)); err != nil || got != "200 HTTP/2.0 Hello World!" {
		t.Errorf("GET %s trusting the CA's root: %q, %v", url, got, err)
	}
	if code, body, err := get(d.httpAddr, host); code != 200 || body != "Hello World!" {
		t.Errorf("over HTTP: %d %q %v", code, body, err)
	}

	t.Run("a refused domain says why and keeps serving HTTP", func(t *testing.T) {
		d.apply(t, `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: shop
  namespace: default
  labels:
    tls: blocked
spec:
  template:
    spec:
      containers:
        - image: ko://github.com/knitops/knit/examples/helloworld
`)
		waitFor(t, "shop's refusal on its Route", 3*time.Minute, func(ctx context.Context) (bool, string) {
			rt := &servingv1.Route{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "shop"}, rt); err != nil {
				return false, err.Error()
			}
			cond := rt.Status.GetCondition(servingv1.RouteConditionCertificateProvisioned)
			return cond.IsFalse() && cond.Reason == "Rejected" && strings.Contains(cond.Message, "shop.default.blocked.test") &&
				rt.Status.URL == "http://shop.default.blocked.test:"+portOf(httpAddr), fmt.Sprintf("url %s, %+v", rt.Status.URL, cond)
		})
		waitBody(t, d.httpAddr, "shop.default.blocked.test", "Hello World!", time.Minute)
	})
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}
