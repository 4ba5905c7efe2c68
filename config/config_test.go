package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

func TestParseGC(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string]string
		want    *GC
		wantErr string
	}{{
		name: "Knative defaults",
		want: &GC{RetainSinceCreateTime: 48 * time.Hour, RetainSinceLastActiveTime: 15 * time.Hour, MinNonActiveRevisions: 20, MaxNonActiveRevisions: 1000},
	}, {
		name: "every key, disabled where allowed",
		data: map[string]string{"retain-since-create-time": "disabled", "retain-since-last-active-time": "1h", "min-non-active-revisions": "2", "max-non-active-revisions": "disabled"},
		want: &GC{RetainSinceCreateTime: Disabled, RetainSinceLastActiveTime: time.Hour, MinNonActiveRevisions: 2, MaxNonActiveRevisions: -1},
	}, {
		name:    "bad duration names the key",
		data:    map[string]string{"retain-since-create-time": "two days"},
		wantErr: `config-gc: retain-since-create-time="two days"`,
	}, {
		name:    "min above max",
		data:    map[string]string{"min-non-active-revisions": "5", "max-non-active-revisions": "3"},
		wantErr: "min-non-active-revisions=5 is greater than max-non-active-revisions=3",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseGC(tc.data)
			checkErr(t, err, tc.wantErr)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseGC (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDefaults(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string]string
		want    *Defaults
		wantErr string
	}{{
		name: "Knative defaults",
		want: &Defaults{RevisionTimeoutSeconds: 300, MaxRevisionTimeoutSeconds: 600, ContainerConcurrencyMaxLimit: 1000},
	}, {
		name: "raised maximum",
		data: map[string]string{"revision-timeout-seconds": "900", "max-revision-timeout-seconds": "3600", "container-concurrency": "50"},
		want: &Defaults{RevisionTimeoutSeconds: 900, MaxRevisionTimeoutSeconds: 3600, ContainerConcurrency: 50, ContainerConcurrencyMaxLimit: 1000},
	}, {
		name:    "default above maximum",
		data:    map[string]string{"revision-timeout-seconds": "900"},
		wantErr: "revision-timeout-seconds=900 is greater than max-revision-timeout-seconds=600",
	}, {
		name:    "not a number",
		data:    map[string]string{"container-concurrency": "lots"},
		wantErr: `config-defaults: container-concurrency="lots": want an integer`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDefaults(tc.data)
			checkErr(t, err, tc.wantErr)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseDefaults (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDomainLookup(t *testing.T) {
	d, err := ParseDomain(map[string]string{
		"example.com":  "",
		"prod.example": "selector:\n  env: prod",
		"eu.prod":      "selector:\n  env: prod\n  region: eu",
		"_example":     "ignored",
	}, "localhost")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		labels map[string]string
		want   string
	}{
		{nil, "example.com"},
		{map[string]string{"env": "prod"}, "prod.example"},
		{map[string]string{"env": "prod", "region": "eu"}, "eu.prod"},
		{map[string]string{"env": "dev"}, "example.com"},
	}
	for _, tc := range tests {
		if got := d.LookupDomain(tc.labels); got != tc.want {
			t.Errorf("LookupDomain(%v) = %q, want %q", tc.labels, got, tc.want)
		}
	}
	empty, _ := ParseDomain(nil, "localhost")
	if got := empty.LookupDomain(nil); got != "localhost" {
		t.Errorf("default domain = %q, want localhost", got)
	}
	if _, err := ParseDomain(map[string]string{"x.com": "app: a"}, "localhost"); err == nil {
		t.Error("a value that is neither empty nor a selector was accepted")
	}
}

func TestNetworkHost(t *testing.T) {
	tests := []struct {
		name, tag, want string
		data            map[string]string
		wantErr         string
	}{
		{name: "default template", want: "hello.default.localhost"},
		{name: "tag", tag: "old", want: "old-hello.default.localhost"},
		{name: "custom template", data: map[string]string{"domain-template": "{{.Name}}-{{.Namespace}}.{{.Domain}}"}, want: "hello-default.localhost"},
		{name: "broken template", data: map[string]string{"domain-template": "{{.Name"}, wantErr: "domain-template"},
		{name: "unknown field", data: map[string]string{"domain-template": "{{.Nope}}.{{.Domain}}"}, wantErr: "domain-template"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := ParseNetwork(tc.data)
			checkErr(t, err, tc.wantErr)
			if err != nil {
				return
			}
			got, err := n.Host("hello", "default", "localhost", tc.tag)
			if err != nil || got != tc.want {
				t.Errorf("Host = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Fatalf("error = %v, want one containing %q", err, want)
	}
}

func TestStoreKeepsLastGoodSnapshot(t *testing.T) {
	s, err := NewStore("localhost")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(GCConfigName, map[string]string{"min-non-active-revisions": "3"}); err != nil {
		t.Fatal(err)
	}
	if got := s.Load().GC.MinNonActiveRevisions; got != 3 {
		t.Fatalf("after update min-non-active-revisions = %d, want 3", got)
	}
	if err := s.Update(GCConfigName, map[string]string{"min-non-active-revisions": "three"}); err == nil {
		t.Fatal("a bad edit was accepted")
	}
	if got := s.Load().GC.MinNonActiveRevisions; got != 3 {
		t.Errorf("after a bad edit min-non-active-revisions = %d, want the last good 3", got)
	}
	if err := s.Update(GCConfigName, nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Load().GC.MinNonActiveRevisions; got != 20 {
		t.Errorf("after delete min-non-active-revisions = %d, want the default 20", got)
	}
}

func TestParseNetworkEgressAllow(t *testing.T) {
	n, err := ParseNetwork(map[string]string{"egress-allow": "127.0.0.1:9000,\n10.0.0.0/8 git.internal.example"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range n.EgressAllow {
		got = append(got, r.String())
	}
	if diff := cmp.Diff([]string{"127.0.0.1:9000", "10.0.0.0/8", "git.internal.example"}, got); diff != "" {
		t.Errorf("egress-allow (-want +got):\n%s", diff)
	}
	if n, _ := ParseNetwork(nil); len(n.EgressAllow) != 0 {
		t.Errorf("default egress-allow = %v, want none", n.EgressAllow)
	}
	_, err = ParseNetwork(map[string]string{"egress-allow": "127.0.0.1:http"})
	checkErr(t, err, `config-network: egress-allow: "127.0.0.1:http": port "http" is not a number from 1 to 65535`)
}

// TestParseNetworkHTTPProtocol: Knative's values in any case; Disabled,
// deprecated in Knative and served as Enabled there, is Enabled; anything
// else refuses the ConfigMap rather than guess.
func TestParseNetworkHTTPProtocol(t *testing.T) {
	for _, tc := range []struct {
		value   *string
		want    HTTPProtocol
		wantErr string
	}{
		{value: nil, want: HTTPEnabled},
		{value: ptr.To(""), want: HTTPEnabled},
		{value: ptr.To("Enabled"), want: HTTPEnabled},
		{value: ptr.To("Redirected"), want: HTTPRedirected},
		{value: ptr.To(" REDIRECTED "), want: HTTPRedirected},
		{value: ptr.To("Disabled"), want: HTTPEnabled},
		{value: ptr.To("https-only"), wantErr: `config-network: http-protocol="https-only": want Enabled or Redirected, got "https-only"`},
	} {
		data := map[string]string{}
		if tc.value != nil {
			data["http-protocol"] = *tc.value
		}
		n, err := ParseNetwork(data)
		checkErr(t, err, tc.wantErr)
		if err == nil && n.HTTPProtocol != tc.want {
			t.Errorf("http-protocol %v: got %q, want %q", data, n.HTTPProtocol, tc.want)
		}
	}
}

func TestRouteHTTPProtocol(t *testing.T) {
	redirected, err := ParseNetwork(map[string]string{"http-protocol": "Redirected"})
	if err != nil {
		t.Fatal(err)
	}
	enabled, _ := ParseNetwork(nil)
	for _, tc := range []struct {
		net     *Network
		anns    map[string]string
		want    HTTPProtocol
		wantErr string
	}{
		{net: enabled, want: HTTPEnabled},
		{net: redirected, want: HTTPRedirected},
		{net: enabled, anns: map[string]string{HTTPProtocolAnnotation: "Redirected"}, want: HTTPRedirected},
		{net: redirected, anns: map[string]string{HTTPProtocolAnnotation: "enabled"}, want: HTTPEnabled},
		{net: enabled, anns: map[string]string{HTTPOptionAnnotation: "Redirected", HTTPProtocolAnnotation: "Enabled"}, want: HTTPRedirected},
		{net: enabled, anns: map[string]string{HTTPProtocolAnnotation: "Disabled"},
			wantErr: `annotation networking.knative.dev/http-protocol="Disabled": want Enabled or Redirected`},
	} {
		got, err := tc.net.RouteHTTPProtocol(tc.anns)
		checkErr(t, err, tc.wantErr)
		if err == nil && got != tc.want {
			t.Errorf("%v on %q: got %q, want %q", tc.anns, tc.net.HTTPProtocol, got, tc.want)
		}
	}
}

// external-domain-tls (or Knative's older auto-tls) needs an https ACME
// directory; a CA bundle must hold a certificate.
func TestParseNetworkExternalDomainTLS(t *testing.T) {
	const dir = "https://127.0.0.1:14000/dir"
	for _, tc := range []struct {
		data    map[string]string
		want    bool
		wantErr string
	}{
		{data: nil, want: false},
		{data: map[string]string{"external-domain-tls": "Enabled", "acme-directory": dir}, want: true},
		{data: map[string]string{"auto-tls": "Enabled", "acme-directory": dir}, want: true},
		{data: map[string]string{"auto-tls": "Enabled", "external-domain-tls": "Disabled", "acme-directory": dir}, want: false},
		{data: map[string]string{"external-domain-tls": "Enabled"},
			wantErr: "config-network: external-domain-tls is Enabled but acme-directory names no ACME CA"},
		{data: map[string]string{"external-domain-tls": "on", "acme-directory": dir},
			wantErr: `config-network: external-domain-tls="on": want Enabled or Disabled`},
		{data: map[string]string{"external-domain-tls": "Enabled", "acme-directory": "http://127.0.0.1:14000/dir"},
			wantErr: `config-network: acme-directory "http://127.0.0.1:14000/dir": want an https:// URL (ACME runs over HTTPS)`},
		{data: map[string]string{"acme-directory": dir, "acme-ca-bundle": "not PEM"},
			wantErr: "config-network: acme-ca-bundle: no PEM certificate in it"},
	} {
		n, err := ParseNetwork(tc.data)
		checkErr(t, err, tc.wantErr)
		if err == nil && n.ExternalDomainTLS != tc.want {
			t.Errorf("%v: external-domain-tls %v, want %v", tc.data, n.ExternalDomainTLS, tc.want)
		}
	}
}

// autocreate-cluster-domain-claims is off unless set, as in Knative, and
// a value that is not a boolean is refused rather than read as off.
func TestParseNetworkAutocreateClaims(t *testing.T) {
	for _, tc := range []struct {
		data    map[string]string
		want    bool
		wantErr string
	}{
		{data: nil, want: false},
		{data: map[string]string{"autocreate-cluster-domain-claims": "true"}, want: true},
		{data: map[string]string{"autocreate-cluster-domain-claims": "false"}, want: false},
		{data: map[string]string{"autocreate-cluster-domain-claims": "yes please"}, wantErr: "autocreate-cluster-domain-claims"},
	} {
		n, err := ParseNetwork(tc.data)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want one naming %q", tc.data, err, tc.wantErr)
			}
			continue
		}
		if err != nil || n.AutocreateClusterDomainClaims != tc.want {
			t.Errorf("%v: autocreate %v (%v), want %v", tc.data, n.AutocreateClusterDomainClaims, err, tc.want)
		}
	}
}

// TestParseNetworkRolloutDuration: whole non-negative seconds, as
// Knative's; anything else refuses the ConfigMap.
func TestParseNetworkRolloutDuration(t *testing.T) {
	for _, tc := range []struct {
		data    map[string]string
		want    time.Duration
		wantErr bool
	}{
		{data: nil, want: 0},
		{data: map[string]string{"rollout-duration": "0"}, want: 0},
		{data: map[string]string{"rollout-duration": " 211 "}, want: 211 * time.Second},
		{data: map[string]string{"rollout-duration": ""}, want: 0},
		{data: map[string]string{"rollout-duration": "-444"}, wantErr: true},
		{data: map[string]string{"rollout-duration": "60s"}, wantErr: true},
		{data: map[string]string{"rollout-duration": "mil novecientos"}, wantErr: true},
		{data: map[string]string{"rollout-duration": "99999999999999999"}, wantErr: true},
	} {
		n, err := ParseNetwork(tc.data)
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), "rollout-duration") {
				t.Errorf("%v: error %v, want one naming rollout-duration", tc.data, err)
			}
			continue
		}
		if err != nil || n.RolloutDuration != tc.want {
			t.Errorf("%v: rollout duration %v (%v), want %v", tc.data, n.RolloutDuration, err, tc.want)
		}
	}
}

// TestRouteRolloutDuration: a Route's annotation wins when it names a
// positive duration; otherwise config-network's stands.
func TestRouteRolloutDuration(t *testing.T) {
	n, err := ParseNetwork(map[string]string{"rollout-duration": "120"})
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]time.Duration{
		"":       120 * time.Second,
		"380s":   380 * time.Second,
		"5m":     5 * time.Minute,
		"4":      4 * time.Second,
		"0":      120 * time.Second,
		"0s":     120 * time.Second,
		"-3s":    120 * time.Second,
		"-3":     120 * time.Second,
		"soon":   120 * time.Second,
		"1e3000": 120 * time.Second,
		"1.5s":   120 * time.Second,
	} {
		if got := n.RouteRolloutDuration(map[string]string{RolloutDurationAnnotation: v}); got != want {
			t.Errorf("annotation %q: %v, want %v", v, got, want)
		}
	}
	if got := n.RouteRolloutDuration(nil); got != 120*time.Second {
		t.Errorf("no annotations: %v, want 2m", got)
	}
}

func TestParseRolloutDuration(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 0, "0": 0, "0s": 0, " 4 ": 4 * time.Second, "380s": 380 * time.Second, "1h": time.Hour} {
		if got, err := ParseRolloutDuration(v); err != nil || got != want {
			t.Errorf("ParseRolloutDuration(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"-1", "-1s", "1.5s", "500ms", "soon", "4 s", "99999999999999999"} {
		if _, err := ParseRolloutDuration(v); err == nil {
			t.Errorf("ParseRolloutDuration(%q) accepted", v)
		}
	}
}
