package route

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

// Which Routes get a certificate, and why the others do not.
func TestTLSOff(t *testing.T) {
	on := &config.Network{ExternalDomainTLS: true}
	off := &config.Network{}
	rt := func(labels, annotations map[string]string) *servingv1.Route {
		return &servingv1.Route{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations}}
	}
	for _, tc := range []struct {
		name string
		rt   *servingv1.Route
		n    *config.Network
		want string
	}{
		{"on", rt(nil, nil), on, ""},
		{"off", rt(nil, nil), off, "external-domain-tls is not enabled in config-network"},
		{"cluster-local", rt(map[string]string{servingv1.VisibilityLabelKey: "cluster-local"}, nil), on, "the route is cluster-local"},
		{"opted out", rt(nil, map[string]string{"networking.knative.dev/disable-external-domain-tls": "True"}), on,
			"disabled by the annotation networking.knative.dev/disable-external-domain-tls"},
		{"opted out, Knative's older key", rt(nil, map[string]string{"networking.knative.dev/disableAutoTLS": "true"}), on,
			"disabled by the annotation networking.knative.dev/disableAutoTLS"},
		{"an opt-out that says false", rt(nil, map[string]string{"networking.knative.dev/disable-external-domain-tls": "false"}), on, ""},
	} {
		if got := tlsOff(tc.rt, tc.n); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A certificate covers the Route's URL and its tags' URLs, by host.
func TestRouteHosts(t *testing.T) {
	status := &servingv1.RouteStatus{RouteStatusFields: servingv1.RouteStatusFields{
		URL: "http://hello.default.example.com:8080",
		Traffic: []servingv1.TrafficTarget{
			{RevisionName: "hello-1", Tag: "old", URL: "http://old-hello.default.example.com:8080"},
			{RevisionName: "hello-2"},
			{RevisionName: "hello-3", Tag: "v6", URL: "https://[::1]:8443/"},
			{RevisionName: "hello-4", Tag: "private", URL: "http://private-hello.default.svc.cluster.local"},
		},
	}}
	got := routeHosts(status)
	want := []string{"hello.default.example.com", "old-hello.default.example.com", "[::1]"}
	if len(got) != len(want) {
		t.Fatalf("hosts %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("hosts %v, want %v", got, want)
		}
	}
}

// Turning TLS off releases a certificate once: only when the status
// showed one wanted.
func TestHadCertificate(t *testing.T) {
	for _, tc := range []struct {
		reason string
		set    bool
		want   bool
	}{
		{set: false, want: false},
		{reason: servingv1.ReasonTLSNotEnabled, set: true, want: false},
		{reason: "CertificateReady", set: true, want: true},
		{reason: "RateLimited", set: true, want: true},
	} {
		s := &servingv1.RouteStatus{}
		if tc.set {
			s.Conditions = []duckv1.Condition{{Type: servingv1.RouteConditionCertificateProvisioned, Reason: tc.reason}}
		}
		if got := hadCertificate(s); got != tc.want {
			t.Errorf("reason %q: %v, want %v", tc.reason, got, tc.want)
		}
	}
}
