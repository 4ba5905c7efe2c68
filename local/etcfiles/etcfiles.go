package etcfiles

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The kubelet's limits on what it writes into resolv.conf (the API's
// validation limits, pkg/apis/core/validation), beyond which it drops
// entries and warns.
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
	maxDNSSearchPathLen   = 253 // a DNS subdomain
)

// Hosts is the kubelet's hosts file of a pod in a network of its own:
// its header, the localhost and IPv6 entries, the pod's IP under its
// hostname, then its hostAliases.
func Hosts(ip, hostname string, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString("# Kubernetes-managed hosts file.\n")
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
	b.Write(hostAliasEntries(aliases))
	return b.Bytes()
}

// HostNetworkHosts is the kubelet's hosts file of a pod in its node's
// network: the node's own hosts file (node, its content) under a header
// of its own, then the pod's hostAliases.
func HostNetworkHosts(node []byte, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString("# Kubernetes-managed hosts file (host network).\n")
	b.Write(node)
	b.Write(hostAliasEntries(aliases))
	return b.Bytes()
}

// hostAliasEntries are the kubelet's lines for hostAliases, after its
// own: a blank line, a comment, then one line per alias, its IP and its
// hostnames tab-separated.
func hostAliasEntries(aliases []corev1.HostAlias) []byte {
	if len(aliases) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("\n# Entries added by HostAliases.\n")
	for _, a := range aliases {
		fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
	}
	return b.Bytes()
}

// dnsConfig is a resolver configuration, as the kubelet hands one to the
// container runtime.
type dnsConfig struct {
	servers, searches, options []string
}

// ClusterDNS is the cluster DNS a pod's resolv.conf names under
// ClusterFirst: its nameserver (in knit dev, an isolated replica's
// gateway, package gateway), and the namespace its search list starts
// with. Server "" is none.
type ClusterDNS struct {
	Server, Namespace string
}

// OwnResolvConf reports a pod whose resolv.conf is not its node's own:
// dnsPolicy None, a dnsConfig merged in, or the cluster's DNS under
// ClusterFirst. Any other pod reads its node's unchanged.
func OwnResolvConf(spec *corev1.PodSpec, cluster ClusterDNS) bool {
	return spec.DNSPolicy == corev1.DNSNone || spec.DNSConfig != nil || (cluster.Server != "" && clusterFirst(spec))
}

// clusterFirst says whether spec's pod resolves through the cluster's
// DNS: dnsPolicy ClusterFirst (the default) or ClusterFirstWithHostNet,
// which is ClusterFirst for a pod not in its node's network, as every
// replica with a gateway is.
func clusterFirst(spec *corev1.PodSpec) bool {
	switch spec.DNSPolicy {
	case "", corev1.DNSClusterFirst, corev1.DNSClusterFirstWithHostNet:
		return true
	}
	return false
}

// clusterDNSConfig is the kubelet's ClusterFirst configuration: the
// cluster's nameserver, the namespace's and cluster's search domains
// before the node's, ndots:5.
func clusterDNSConfig(cluster ClusterDNS, host dnsConfig) dnsConfig {
	searches := []string{cluster.Namespace + ".svc." + clusterDomain, "svc." + clusterDomain, clusterDomain}
	return dnsConfig{servers: []string{cluster.Server}, searches: append(searches, host.searches...), options: []string{"ndots:5"}}
}

// clusterDomain is the cluster's DNS domain, Kubernetes' default.
const clusterDomain = "cluster.local"

// ResolvConf is the resolv.conf of a pod of spec on a node whose own is
// host, and what the kubelet would warn of (entries over its limits,
// dropped).
//
// With a cluster DNS (in knit dev, an isolated replica's gateway)
// ClusterFirst names it as the kubelet names the cluster's. Without one
// (the shared network) ClusterFirst (and ClusterFirstWithHostNet) is
// Default, as the kubelet falls back when it knows no cluster DNS: the
// node's resolver configuration. None is dnsConfig alone. A dnsConfig is
// merged in as the kubelet merges it: nameservers and searches appended,
// duplicates dropped, options by name, the pod's over the base's; then
// cut to the kubelet's limits. Written as containerd writes it (search,
// nameserver, options lines); with nothing to write, or without
// dnsConfig on a policy other than None, it is host, unchanged, as it has
// always been for knit dev's replicas.
func ResolvConf(spec *corev1.PodSpec, host []byte, cluster ClusterDNS) (content []byte, warnings []string) {
	if !OwnResolvConf(spec, cluster) {
		return host, nil
	}
	var base dnsConfig
	switch {
	case cluster.Server != "" && clusterFirst(spec):
		base = clusterDNSConfig(cluster, parseResolvConf(host))
	case spec.DNSPolicy != corev1.DNSNone:
		base = parseResolvConf(host)
	}
	cfg := mergeDNSConfig(base, spec.DNSConfig)
	cfg, warnings = cfg.withinLimits()
	if len(cfg.servers)+len(cfg.searches)+len(cfg.options) == 0 {
		return host, warnings
	}
	return cfg.resolvConf(), warnings
}

// parseResolvConf reads a resolv.conf as the kubelet reads the node's:
// nameserver lines add up, the last search line wins (without a trailing
// dot, nor a lone "."), options add up by name, a later one replacing an
// earlier.
func parseResolvConf(data []byte) dnsConfig {
	var c dnsConfig
	for line := range strings.SplitSeq(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch fields[0] {
		case "nameserver":
			if len(fields) >= 2 {
				c.servers = append(c.servers, fields[1])
			}
		case "search":
			c.searches = nil
			for _, s := range fields[1:] {
				if s != "." {
					c.searches = append(c.searches, strings.TrimSuffix(s, "."))
				}
			}
		case "options":
			c.options = setOptions(c.options, fields[1:]...)
		}
	}
	return c
}

// mergeDNSConfig is the kubelet's appendDNSConfig: pod's nameservers and
// searches after base's, each once, and its options over base's.
func mergeDNSConfig(base dnsConfig, pod *corev1.PodDNSConfig) dnsConfig {
	if pod == nil {
		return base
	}
	out := dnsConfig{
		servers:  uniq(append(slices.Clone(base.servers), pod.Nameservers...)),
		searches: uniq(append(slices.Clone(base.searches), pod.Searches...)),
		options:  slices.Clone(base.options),
	}
	for _, o := range pod.Options {
		opt := o.Name
		if o.Value != nil && *o.Value != "" {
			opt += ":" + *o.Value
		}
		out.options = setOptions(out.options, opt)
	}
	return out
}

// setOptions sets each of opts ("name" or "name:value") in options, in
// place of an earlier one of its name, else at the end. The kubelet keeps
// them in a map, in no order; knit keeps the order they came in.
func setOptions(options []string, opts ...string) []string {
	name := func(o string) string { n, _, _ := strings.Cut(o, ":"); return n }
	for _, o := range opts {
		i := slices.IndexFunc(options, func(e string) bool { return name(e) == name(o) })
		if i >= 0 {
			options[i] = o
			continue
		}
		options = append(options, o)
	}
	return options
}

// uniq drops the repeats in s, keeping first occurrences.
func uniq(s []string) []string {
	var out []string
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// withinLimits cuts c to the kubelet's limits, as it does, saying what
// it dropped in the kubelet's words: the first three nameservers; the
// first 32 search paths, those longer than a DNS name dropped, and the
// last ones while the search line is longer than 2048 characters.
func (c dnsConfig) withinLimits() (dnsConfig, []string) {
	var warnings []string
	if len(c.servers) > maxDNSNameservers {
		c.servers = c.servers[:maxDNSNameservers]
		warnings = append(warnings, "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: "+strings.Join(c.servers, " "))
	}
	searches, cut := limitSearches(c.searches)
	c.searches = searches
	if cut {
		warnings = append(warnings, "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: "+strings.Join(c.searches, " "))
	}
	return c, warnings
}

// limitSearches is the kubelet's formDNSSearchFitsLimits.
func limitSearches(searches []string) (out []string, cut bool) {
	if len(searches) > maxDNSSearchPaths {
		searches, cut = searches[:maxDNSSearchPaths], true
	}
	for _, s := range searches {
		if len(s) > maxDNSSearchPathLen {
			cut = true
			continue
		}
		out = append(out, s)
	}
	for len(out) > 0 && len(strings.Join(out, " ")) > maxDNSSearchListChars {
		out, cut = out[:len(out)-1], true
	}
	return out, cut
}

// resolvConf is c written as containerd's CRI plugin writes a sandbox's.
func (c dnsConfig) resolvConf() []byte {
	var b bytes.Buffer
	if len(c.searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(c.searches, " "))
	}
	if len(c.servers) > 0 {
		fmt.Fprintf(&b, "nameserver %s\n", strings.Join(c.servers, "\nnameserver "))
	}
	if len(c.options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(c.options, " "))
	}
	return b.Bytes()
}
