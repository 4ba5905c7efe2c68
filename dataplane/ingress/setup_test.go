//go:build !unit

package ingress

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/knitops/knit/api"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/internal/poll"
	"github.com/knitops/knit/internal/testapi"
)

// ingressUser is who the test's ingress runs as.
const ingressUser = "system:serviceaccount:knit-system:knit-ingress"

// grantIngress gives ingressUser what the chart gives knit-ingress
// (charts/knit/templates/ingress/rbac.yaml, whose grants charttest
// checks): Routes and EndpointSlices everywhere; config-features and
// config-network alone, and Secrets, in knit-system. A cache that listed
// or watched ConfigMaps other than by those names, or Secrets elsewhere,
// would be refused.
func grantIngress(t *testing.T, ctx context.Context, admin client.Client) {
	t.Helper()
	read := []string{"get", "list", "watch"}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: ingressUser}}
	meta := metav1.ObjectMeta{Name: "knit-ingress", Namespace: config.SystemNamespace}
	for _, o := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: meta.Name}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"serving.knative.dev"}, Resources: []string{"routes", "domainmappings"}, Verbs: read},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: read},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: meta.Name}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: meta.Name}},
		&rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{config.FeaturesConfigName, config.NetworkConfigName}, Verbs: read},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: read},
		}},
		&rbacv1.RoleBinding{ObjectMeta: meta, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: meta.Name}},
	} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

// startIngress starts an API server with knit's CRDs and, as ingressUser
// with its cache narrowed as `knit ingress` narrows it, a manager feeding
// a router; it returns an admin client and the router's URL.
func startIngress(t *testing.T) (client.Client, string) {
	t.Helper()
	admin, router := startRouter(t)
	front := httptest.NewServer(router)
	t.Cleanup(front.Close)
	return admin, front.URL
}

// startRouter is startIngress without the HTTP front.
func startRouter(t *testing.T) (client.Client, *Router) {
	t.Helper()
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	cfg := testapi.StartT(t, filepath.Join("..", "..", "charts", "knit", "crds"))
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.SystemNamespace}}); err != nil {
		t.Fatal(err)
	}
	grantIngress(t, ctx, admin)

	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: ingressUser}
	var cacheOpts cache.Options
	RestrictCache(&cacheOpts)
	mgr, err := ctrl.NewManager(as, ctrl.Options{
		Scheme: scheme, Cache: cacheOpts,
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		// -count=N starts a manager per run in one process.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	router := NewRouter()
	if err := SetupWithManager(mgr, router); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return admin, router
}

// answer is what a request through the router gets: the app's answer, or
// the status and body of the router's refusal.
func answer(ctx context.Context, front, host string, header http.Header) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, front, nil)
	if err != nil {
		return err.Error()
	}
	req.Host = host
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("%d %s", resp.StatusCode, body)
	}
	return string(body)
}

// seen is one request through the router and the answer it must get.
type seen struct {
	host   string
	header http.Header
	want   string
}

// An ingress holding only the chart's grants follows config-features
// without a restart: a ConfigMap created Enabled turns tag-header routing
// on, an edit to Disabled turns it off.
func TestIngressFollowsConfigFeatures(t *testing.T) {
	admin, front := startIngress(t)
	ctx := context.Background()
	createHello(t, ctx, admin)
	expect := func(what string, requests ...seen) {
		t.Helper()
		poll.Until(t, what, 20*time.Millisecond, time.Minute, func(ctx context.Context) (bool, string) {
			for _, r := range requests {
				if got := answer(ctx, front, r.host, r.header); got != r.want {
					return false, fmt.Sprintf("%s with %v: %q, want %q", r.host, r.header, got, r.want)
				}
			}
			return true, ""
		})
	}
	const main, tagHost = "hello.default.localhost", "old-hello.default.localhost"
	tag := http.Header{TagHeader: {"old"}}
	off := []seen{{main, tag, "two tag=old default="}, {main, nil, "two tag= default="}, {tagHost, nil, "one tag= default="}}
	expect("no config-features: the tag header ignored", off...)

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: config.FeaturesConfigName},
		Data:       map[string]string{"tag-header-based-routing": "Enabled"},
	}
	if err := admin.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	expect("tag-header-based-routing: Enabled",
		seen{main, tag, "one tag=old default="},
		seen{main, http.Header{TagHeader: {"nope"}}, "two tag=nope default=true"},
		seen{main, nil, "two tag= default=true"},
		seen{tagHost, nil, "one tag=old default="})

	cm.Data["tag-header-based-routing"] = "Disabled"
	if err := admin.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	expect("tag-header-based-routing edited to Disabled", off...)
}

// createHello creates hello() with its status and helloSlices.
func createHello(t *testing.T, ctx context.Context, admin client.Client) {
	t.Helper()
	rt := hello()[0]
	status := rt.Status
	if err := admin.Create(ctx, &rt); err != nil {
		t.Fatal(err)
	}
	rt.Status = status
	if err := admin.Status().Update(ctx, &rt); err != nil {
		t.Fatal(err)
	}
	for _, s := range helloSlices(t) {
		// The API server refuses loopback IPs in IPv4 slices; knit dev
		// publishes its replicas as FQDN slices of IP literals.
		s.AddressType = discoveryv1.AddressTypeFQDN
		if err := admin.Create(ctx, &s); err != nil {
			t.Fatal(err)
		}
	}
}
