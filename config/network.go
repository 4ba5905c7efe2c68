package config

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/knitops/knit/gitsync/egress"
)

// ConfigMap names, Knative's.
const (
	DomainConfigName     = "config-domain"
	NetworkConfigName    = "config-network"
	GCConfigName         = "config-gc"
	DeploymentConfigName = "config-deployment"
	DefaultsConfigName   = "config-defaults"
	AutoscalerConfigName = "config-autoscaler"
)

// Domain is config-domain: which domain suffix a Route's host gets. Keys
// are domains; a value of "" makes the domain the default, a value
// "selector:\n  key: value" picks Routes by label (Knative's format).
type Domain struct {
	Default   string
	Selectors map[string]map[string]string
}

// ParseDomain reads config-domain; localDefault is the domain used when the
// map names none (knit dev uses "localhost", which resolves to loopback).
func ParseDomain(data map[string]string, localDefault string) (*Domain, error) {
	d := &Domain{Default: localDefault, Selectors: map[string]map[string]string{}}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasPrefix(k, "_") {
			continue // Knative's _example block
		}
		v := strings.TrimSpace(data[k])
		if v == "" {
			d.Default = k
			continue
		}
		sel, err := parseSelector(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", DomainConfigName, k, err)
		}
		d.Selectors[k] = sel
	}
	return d, nil
}

// parseSelector reads "selector:\n  app: prod" into a label map.
func parseSelector(v string) (map[string]string, error) {
	lines := strings.Split(v, "\n")
	if strings.TrimSpace(lines[0]) != "selector:" {
		return nil, fmt.Errorf("want \"\" or \"selector:\\n  key: value\", got %q", v)
	}
	sel := map[string]string{}
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		k, val, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok {
			return nil, fmt.Errorf("selector line %q: want key: value", l)
		}
		sel[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(val), `"'`)
	}
	return sel, nil
}

// LookupDomain picks the domain for a Route with these labels: the most
// specific matching selector, else the default.
func (d *Domain) LookupDomain(labels map[string]string) string {
	best, bestLen := d.Default, -1
	for domain, sel := range d.Selectors {
		if matches(sel, labels) && (len(sel) > bestLen || (len(sel) == bestLen && domain < best)) {
			best, bestLen = domain, len(sel)
		}
	}
	return best
}

func matches(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// Network is config-network: how host names are made, and, knit's own
// key, where knit may connect on a user's behalf.
type Network struct {
	DomainTemplate string
	TagTemplate    string
	// DefaultExternalScheme is http or https for Route URLs.
	DefaultExternalScheme string
	// HTTPProtocol (key http-protocol) is what the ingress does with a
	// plain-HTTP request to a public Route: serve it (Enabled) or redirect
	// it to HTTPS (Redirected). A Route's HTTPProtocolAnnotation wins.
	HTTPProtocol HTTPProtocol
	// ExternalDomainTLS (key external-domain-tls, Enabled or Disabled;
	// Knative's older auto-tls too) gives every public Route a
	// certificate from the ACME CA of ACME.
	ExternalDomainTLS bool
	// ACME is the CA external-domain-tls obtains certificates from,
	// knit's own keys (knit issues them itself, as Caddy does, rather
	// than through cert-manager).
	ACME ACME
	// EgressAllow (key egress-allow) lists the addresses, ranges and host
	// names EventSinks and GitRepositories may reach although egress
	// refuses them by default (loopback, link-local, the control plane's
	// own), e.g. "127.0.0.1:9000, git.internal.example".
	EgressAllow []egress.Rule
	// AutocreateClusterDomainClaims (key autocreate-cluster-domain-claims,
	// default false as in Knative) lets a DomainMapping claim a domain
	// no namespace holds yet. Off, an operator hands domains out by
	// creating ClusterDomainClaims; on, the first namespace to map a
	// domain gets it, which suits a cluster of one team.
	AutocreateClusterDomainClaims bool
	// RolloutDuration (key rollout-duration, whole seconds, default 0 =
	// off, as in Knative) spreads a Configuration's move to its new
	// latest ready Revision over this long: the new Revision starts at
	// 1% and takes the rest in equal steps. A Route's
	// RolloutDurationAnnotation overrides it (RouteRolloutDuration).
	RolloutDuration time.Duration

	domainTmpl *template.Template
	tagTmpl    *template.Template
}

// ParseNetwork reads config-network with Knative's defaults.
func ParseNetwork(data map[string]string) (*Network, error) {
	n := &Network{
		DomainTemplate:        "{{.Name}}.{{.Namespace}}.{{.Domain}}",
		TagTemplate:           "{{.Tag}}-{{.Name}}",
		DefaultExternalScheme: "http",
		HTTPProtocol:          HTTPEnabled,
	}
	p := parser{cm: NetworkConfigName, data: data}
	p.string("domain-template", &n.DomainTemplate)
	p.string("tag-template", &n.TagTemplate)
	p.string("default-external-scheme", &n.DefaultExternalScheme)
	if v, ok := data[httpProtocolKey]; ok {
		proto, err := ParseHTTPProtocol(v)
		if err != nil {
			p.fail(httpProtocolKey, v, err.Error())
		}
		n.HTTPProtocol = proto
	}
	n.ExternalDomainTLS = p.enabled("auto-tls", false)
	n.ExternalDomainTLS = p.enabled("external-domain-tls", n.ExternalDomainTLS)
	p.bool("autocreate-cluster-domain-claims", &n.AutocreateClusterDomainClaims)
	var rolloutSecs int64
	p.int64(rolloutDurationKey, &rolloutSecs, 0, math.MaxInt64/int64(time.Second))
	n.RolloutDuration = time.Duration(rolloutSecs) * time.Second
	p.string("acme-directory", &n.ACME.Directory)
	p.string("acme-email", &n.ACME.Email)
	n.ACME.CABundle = []byte(strings.TrimSpace(data["acme-ca-bundle"]))
	if p.err != nil {
		return nil, p.err
	}
	if err := n.ACME.validate(n.ExternalDomainTLS); err != nil {
		return nil, fmt.Errorf("%s: %w", NetworkConfigName, err)
	}
	var err error
	if n.EgressAllow, err = egress.ParseRules(data[egress.AllowKey]); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", NetworkConfigName, egress.AllowKey, err)
	}
	if n.domainTmpl, err = template.New("domain").Option("missingkey=error").Parse(n.DomainTemplate); err != nil {
		return nil, fmt.Errorf("%s: domain-template: %w", NetworkConfigName, err)
	}
	if n.tagTmpl, err = template.New("tag").Option("missingkey=error").Parse(n.TagTemplate); err != nil {
		return nil, fmt.Errorf("%s: tag-template: %w", NetworkConfigName, err)
	}
	if _, err := n.Host("name", "namespace", "example.com", ""); err != nil {
		return nil, err
	}
	return n, nil
}

// TagName renders tag-template: the name of a tag's own Kubernetes
// Service, and the first part of its host.
func (n *Network) TagName(name, tag string) (string, error) {
	var b bytes.Buffer
	if err := n.tagTmpl.Execute(&b, map[string]string{"Tag": tag, "Name": name}); err != nil {
		return "", fmt.Errorf("%s: tag-template: %w", NetworkConfigName, err)
	}
	return b.String(), nil
}

// Host renders a Route's host, or a tagged target's host when tag is set.
func (n *Network) Host(name, namespace, domain, tag string) (string, error) {
	if tag != "" {
		var err error
		if name, err = n.TagName(name, tag); err != nil {
			return "", err
		}
	}
	var b bytes.Buffer
	data := map[string]any{"Name": name, "Namespace": namespace, "Domain": domain, "Annotations": map[string]string{}, "Labels": map[string]string{}}
	if err := n.domainTmpl.Execute(&b, data); err != nil {
		return "", fmt.Errorf("%s: domain-template: %w", NetworkConfigName, err)
	}
	return b.String(), nil
}

// HTTPProtocol is Knative's http-protocol: what a plain-HTTP request to a
// public host gets.
type HTTPProtocol string

// The values of http-protocol, Knative's (compared case-insensitively, as
// Knative lower-cases them).
const (
	HTTPEnabled    HTTPProtocol = "enabled"
	HTTPRedirected HTTPProtocol = "redirected"
	// HTTPDisabled is deprecated in Knative, whose ingresses then serve
	// HTTP as if Enabled; knit does the same rather than refuse a
	// ConfigMap Knative accepts.
	HTTPDisabled HTTPProtocol = "disabled"
)

const httpProtocolKey = "http-protocol"

// The annotations on a Route (or a Service, which passes them on) that
// override config-network's http-protocol for its hosts, Knative's two
// spellings; HTTPOptionAnnotation wins when both are set, as in Knative.
const (
	HTTPOptionAnnotation   = "networking.knative.dev/httpOption"
	HTTPProtocolAnnotation = "networking.knative.dev/http-protocol"
)

// RouteHTTPProtocol is the http-protocol of a Route with these
// annotations: theirs, else config-network's. Unlike config-network, an
// annotation may not say Disabled: Knative refuses it there.
func (n *Network) RouteHTTPProtocol(annotations map[string]string) (HTTPProtocol, error) {
	for _, key := range []string{HTTPOptionAnnotation, HTTPProtocolAnnotation} {
		v, ok := annotations[key]
		if !ok {
			continue
		}
		switch p := HTTPProtocol(strings.ToLower(v)); p {
		case HTTPEnabled, HTTPRedirected:
			return p, nil
		default:
			return "", fmt.Errorf("annotation %s=%q: want Enabled or Redirected", key, v)
		}
	}
	return n.HTTPProtocol, nil
}

// ParseHTTPProtocol reads an http-protocol value; "" is Enabled.
func ParseHTTPProtocol(v string) (HTTPProtocol, error) {
	switch p := HTTPProtocol(strings.ToLower(strings.TrimSpace(v))); p {
	case "", HTTPEnabled, HTTPDisabled:
		return HTTPEnabled, nil
	case HTTPRedirected:
		return p, nil
	default:
		return "", fmt.Errorf("want Enabled or Redirected, got %q", v)
	}
}

// ACME is where external-domain-tls obtains certificates.
type ACME struct {
	// Directory (acme-directory) is the CA's ACME directory URL, e.g.
	// https://acme-v02.api.letsencrypt.org/directory. No default: a
	// cluster (or a test) never reaches a public CA by omission.
	Directory string
	// Email (acme-email) is the account's contact, where the CA writes
	// about expiring certificates.
	Email string
	// CABundle (acme-ca-bundle) is PEM of the roots the CA's own HTTPS
	// is checked against, for a private CA; empty is the system's.
	CABundle []byte
}

func (a ACME) validate(enabled bool) error {
	if enabled && a.Directory == "" {
		return fmt.Errorf("external-domain-tls is Enabled but acme-directory names no ACME CA")
	}
	if a.Directory != "" {
		u, err := url.Parse(a.Directory)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("acme-directory %q: want an https:// URL (ACME runs over HTTPS)", a.Directory)
		}
	}
	if len(a.CABundle) > 0 && !x509.NewCertPool().AppendCertsFromPEM(a.CABundle) {
		return fmt.Errorf("acme-ca-bundle: no PEM certificate in it")
	}
	return nil
}

// disableExternalDomainTLSAnnotations opt a Route, its Service or a
// DomainMapping out of external-domain-tls: Knative's current and older
// spellings.
var disableExternalDomainTLSAnnotations = []string{
	"networking.knative.dev/disable-external-domain-tls",
	"networking.knative.dev/disableExternalDomainTLS",
	"networking.knative.dev/disableAutoTLS",
	"networking.knative.dev/disable-auto-tls",
}

// ExternalDomainTLSDisabledBy is the annotation among annotations that
// opts its object out of external-domain-tls; "" when none does.
func ExternalDomainTLSDisabledBy(annotations map[string]string) string {
	for _, key := range disableExternalDomainTLSAnnotations {
		if strings.EqualFold(annotations[key], "true") {
			return key
		}
	}
	return ""
}

const rolloutDurationKey = "rollout-duration"

// RolloutDurationAnnotation on a Route (or its Service, which passes it
// on) sets the Route's rollout duration, overriding config-network's
// rollout-duration: a Go duration such as "380s" or "5m", Knative's form,
// or, knit's leniency, a bare number of seconds like the ConfigMap's.
const RolloutDurationAnnotation = "serving.knative.dev/rollout-duration"

// RouteRolloutDuration is the rollout duration of a Route with these
// annotations. As in Knative, an annotation that is absent, zero or
// invalid (which admission refuses) leaves config-network's value in
// force: it can lengthen or shorten a rollout, not turn on instant moves
// where the cluster asks for gradual ones.
func (n *Network) RouteRolloutDuration(annotations map[string]string) time.Duration {
	if d, err := ParseRolloutDuration(annotations[RolloutDurationAnnotation]); err == nil && d > 0 {
		return d
	}
	return n.RolloutDuration
}

// ParseRolloutDuration reads RolloutDurationAnnotation's value: a
// non-negative duration in whole seconds; "" is 0.
func ParseRolloutDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs > math.MaxInt64/int64(time.Second) {
			return 0, fmt.Errorf("rollout-duration %q is too long", v)
		}
		d = time.Duration(secs) * time.Second
	} else if d, err = time.ParseDuration(v); err != nil {
		return 0, fmt.Errorf("rollout-duration %q: want a duration such as \"380s\" or a number of seconds", v)
	}
	switch {
	case d < 0:
		return 0, fmt.Errorf("rollout-duration %q is negative", v)
	case d.Truncate(time.Second) != d:
		return 0, fmt.Errorf("rollout-duration %q is not in whole seconds", v)
	}
	return d, nil
}
