package webhooks

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/knitops/knit/api"
)

func urlConfig(path string) admissionregistrationv1.WebhookClientConfig {
	u := "https://127.0.0.1:9443" + path
	return admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: []byte("ca")}
}

func TestConfigurations(t *testing.T) {
	mutating, validating := Configurations(urlConfig)
	if mutating.Name != "knit-defaulting" || validating.Name != "knit-validation" {
		t.Errorf("names = %q, %q; want knit-defaulting, knit-validation", mutating.Name, validating.Name)
	}
	wantService := admissionregistrationv1.ValidatingWebhook{
		Name:         "services.validation.knit.dev",
		ClientConfig: urlConfig("/validate-serving-knative-dev-v1-service"),
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{"CREATE", "UPDATE"},
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{"serving.knative.dev"}, APIVersions: []string{"v1"}, Resources: []string{"services"},
				Scope: ptr.To(admissionregistrationv1.NamespacedScope),
			},
		}},
		FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"},
	}
	if diff := cmp.Diff(wantService, validating.Webhooks[0]); diff != "" {
		t.Errorf("Service validating webhook (-want +got):\n%s", diff)
	}
	var got []string
	for i, m := range mutating.Webhooks {
		got = append(got, m.Name, *m.ClientConfig.URL, validating.Webhooks[i].Name, *validating.Webhooks[i].ClientConfig.URL)
	}
	want := []string{
		"services.defaulting.knit.dev", "https://127.0.0.1:9443/mutate-serving-knative-dev-v1-service",
		"services.validation.knit.dev", "https://127.0.0.1:9443/validate-serving-knative-dev-v1-service",
		"configurations.defaulting.knit.dev", "https://127.0.0.1:9443/mutate-serving-knative-dev-v1-configuration",
		"configurations.validation.knit.dev", "https://127.0.0.1:9443/validate-serving-knative-dev-v1-configuration",
		"revisions.defaulting.knit.dev", "https://127.0.0.1:9443/mutate-serving-knative-dev-v1-revision",
		"revisions.validation.knit.dev", "https://127.0.0.1:9443/validate-serving-knative-dev-v1-revision",
		"routes.defaulting.knit.dev", "https://127.0.0.1:9443/mutate-serving-knative-dev-v1-route",
		"routes.validation.knit.dev", "https://127.0.0.1:9443/validate-serving-knative-dev-v1-route",
		"domainmappings.defaulting.knit.dev", "https://127.0.0.1:9443/mutate-serving-knative-dev-v1beta1-domainmapping",
		"domainmappings.validation.knit.dev", "https://127.0.0.1:9443/validate-serving-knative-dev-v1beta1-domainmapping",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("webhook names and URLs (-want +got):\n%s", diff)
	}
}

// TestSetupServesConfiguredPaths proves Setup and Configurations agree
// without an API server: every registered path has a handler.
func TestSetupServesConfiguredPaths(t *testing.T) {
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	srv := webhook.NewServer(webhook.Options{Port: 1})
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme: scheme, WebhookServer: srv, Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := Setup(mgr, Static(DefaultConfig())); err != nil {
		t.Fatal(err)
	}
	mutating, validating := Configurations(urlConfig)
	var paths []string
	for i := range mutating.Webhooks {
		for _, u := range []string{*mutating.Webhooks[i].ClientConfig.URL, *validating.Webhooks[i].ClientConfig.URL} {
			parsed, err := url.Parse(u)
			if err != nil {
				t.Fatal(err)
			}
			paths = append(paths, parsed.Path)
		}
	}
	for _, p := range paths {
		if _, pattern := srv.WebhookMux().Handler(&http.Request{URL: &url.URL{Path: p}}); pattern != p {
			t.Errorf("no webhook served at %s (matched %q)", p, pattern)
		}
	}
}
