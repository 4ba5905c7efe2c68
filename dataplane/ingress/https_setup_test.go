//go:build !unit

package ingress

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/internal/poll"
)

// An ingress holding only the chart's grants serves the certificate
// Secrets of knit-system live — a namespace's own for its hosts only, a
// renewed one as soon as it is written — never a labelled Secret outside
// knit-system, and follows config-network's http-protocol.
func TestIngressServesCertificatesFromKnitSystem(t *testing.T) {
	admin, router := startRouter(t)
	ctx := context.Background()
	createHello(t, ctx, admin)
	front := httptest.NewServer(router)
	t.Cleanup(front.Close)
	addr := serveTLS(t, router, 8443, nil)

	now := time.Now()
	first := newTestCert(t, now.Add(-time.Minute), now.Add(time.Hour), "hello.default.localhost")
	renewed := newTestCert(t, now.Add(-time.Minute), now.Add(2*time.Hour), "hello.default.localhost")
	elsewhere := newTestCert(t, now.Add(-time.Minute), now.Add(time.Hour), "hello.default.localhost")
	c := httpsClient(addr, first.leaf, renewed.leaf, elsewhere.leaf)
	served := func(what string, want string) {
		t.Helper()
		poll.Until(t, what, 20*time.Millisecond, time.Minute, func(context.Context) (bool, string) {
			c.CloseIdleConnections() // a new handshake each time
			got, err := fetch(t, c, "https://hello.default.localhost/")
			if err != nil {
				return want == "", err.Error()
			}
			return got.serial == want && got.body == "two tag= default=", fmt.Sprintf("%+v", got)
		})
	}
	create := func(o client.Object) {
		t.Helper()
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	outside := elsewhere.secret("outside", "")
	outside.Namespace = "default"
	create(outside)
	create(first.secret("team-a", "team-a"))
	served("a labelled Secret outside knit-system and another namespace's certificate serve nothing", "")

	own := first.secret("own", "default")
	create(own)
	served("the namespace's own certificate", first.leaf.SerialNumber.String())

	own.Data = map[string][]byte{corev1.TLSCertKey: renewed.certPEM, corev1.TLSPrivateKeyKey: renewed.keyPEM}
	if err := admin.Update(ctx, own); err != nil {
		t.Fatal(err)
	}
	served("the renewed certificate, without a restart", renewed.leaf.SerialNumber.String())

	create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: config.NetworkConfigName},
		Data: map[string]string{"http-protocol": "Redirected"}})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	poll.Until(t, "http-protocol: Redirected", 20*time.Millisecond, time.Minute, func(ctx context.Context) (bool, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, front.URL+"/path", nil)
		req.Host = "hello.default.localhost"
		resp, err := noRedirect.Do(req)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		return resp.StatusCode == http.StatusMovedPermanently && loc == "https://hello.default.localhost:8443/path", fmt.Sprintf("%s %s", resp.Status, loc)
	})
}
