package config

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"text/template"

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
	// EgressAllow (key egress-allow) lists the addresses, ranges and host
	// names EventSinks and GitRepositories may reach although egress
	// refuses them by default (loopback, link-local, the control plane's
	// own), e.g. "127.0.0.1:9000, git.internal.example".
	EgressAllow []egress.Rule

	domainTmpl *template.Template
	tagTmpl    *template.Template
}

// ParseNetwork reads config-network with Knative's defaults.
func ParseNetwork(data map[string]string) (*Network, error) {
	n := &Network{
		DomainTemplate:        "{{.Name}}.{{.Namespace}}.{{.Domain}}",
		TagTemplate:           "{{.Tag}}-{{.Name}}",
		DefaultExternalScheme: "http",
	}
	p := parser{cm: NetworkConfigName, data: data}
	p.string("domain-template", &n.DomainTemplate)
	p.string("tag-template", &n.TagTemplate)
	p.string("default-external-scheme", &n.DefaultExternalScheme)
	if p.err != nil {
		return nil, p.err
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

// Host renders a Route's host, or a tagged target's host when tag is set.
func (n *Network) Host(name, namespace, domain, tag string) (string, error) {
	if tag != "" {
		var b bytes.Buffer
		if err := n.tagTmpl.Execute(&b, map[string]string{"Tag": tag, "Name": name}); err != nil {
			return "", fmt.Errorf("%s: tag-template: %w", NetworkConfigName, err)
		}
		name = b.String()
	}
	var b bytes.Buffer
	data := map[string]any{"Name": name, "Namespace": namespace, "Domain": domain, "Annotations": map[string]string{}, "Labels": map[string]string{}}
	if err := n.domainTmpl.Execute(&b, data); err != nil {
		return "", fmt.Errorf("%s: domain-template: %w", NetworkConfigName, err)
	}
	return b.String(), nil
}
