package runtime

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The /etc/hosts and /etc/resolv.conf of a replica's containers, as the
// kubelet (pkg/kubelet/kubelet_pods.go, pkg/kubelet/network/dns) and
// containerd's CRI plugin write them for a pod's.

// hostResolvConf is the resolver configuration the kubelet's --resolv-conf
// names by default: this machine's.
const hostResolvConf = "/etc/resolv.conf"

// hostHosts is this machine's hosts file, the base of a host-network
// pod's.
const hostHosts = "/etc/hosts"

// The kubelet's limits on what it writes into resolv.conf (the API's
// validation limits, pkg/apis/core/validation), beyond which it drops
// entries and warns.
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
	maxDNSSearchPathLen   = 253 // a DNS subdomain
)

// managedHosts is the kubelet's hosts file of a pod in a network of its
// own: its header, the localhost and IPv6 entries, the pod's IP under its
// hostname, then its hostAliases.
func managedHosts(ip, hostname string, aliases []corev1.HostAlias) []byte {
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

// hostNetworkHosts is the kubelet's hosts file of a pod in its node's
// network: the node's own hosts file under a header of its own, then the
// pod's hostAliases.
func hostNetworkHosts(node []byte, aliases []corev1.HostAlias) []byte {
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

// clusterResolver is the cluster DNS a replica's resolv.conf names under
// ClusterFirst: its gateway (package gateway), and the namespace its
// search list starts with. server "" is none.
type clusterResolver struct {
	server, namespace string
}

// ownResolvConf reports a pod whose resolv.conf is not this machine's
// own: dnsPolicy None, a dnsConfig merged in, or the cluster's DNS under
// ClusterFirst.
func ownResolvConf(spec *corev1.PodSpec, cluster clusterResolver) bool {
	return spec.DNSPolicy == corev1.DNSNone || spec.DNSConfig != nil || (cluster.server != "" && clusterFirst(spec))
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
// before this machine's, ndots:5.
func clusterDNSConfig(cluster clusterResolver, host dnsConfig) dnsConfig {
	searches := []string{cluster.namespace + ".svc." + clusterDomain, "svc." + clusterDomain, clusterDomain}
	return dnsConfig{servers: []string{cluster.server}, searches: append(searches, host.searches...), options: []string{"ndots:5"}}
}

// clusterDomain is the cluster's DNS domain, Kubernetes' default.
const clusterDomain = "cluster.local"

// podResolvConf is the resolv.conf of a pod of spec on this machine, host
// being this machine's, and what the kubelet would warn of (entries over
// its limits, dropped).
//
// An isolated replica's gateway is its cluster DNS (cluster): ClusterFirst
// names it as the kubelet names the cluster's. Without one (the shared
// network) ClusterFirst (and ClusterFirstWithHostNet) is Default, as the
// kubelet falls back when it knows no cluster DNS: this machine's
// resolver configuration. None is dnsConfig alone. A dnsConfig is merged in as the kubelet merges it:
// nameservers and searches appended, duplicates dropped, options by name,
// the pod's over the base's; then cut to the kubelet's limits. Written as
// containerd writes it (search, nameserver, options lines); with nothing
// to write, or without dnsConfig on a policy other than None, it is
// host, unchanged, as it has always been for knit dev's replicas.
func podResolvConf(spec *corev1.PodSpec, host []byte, cluster clusterResolver) (content []byte, warnings []string) {
	if !ownResolvConf(spec, cluster) {
		return host, nil
	}
	var base dnsConfig
	switch {
	case cluster.server != "" && clusterFirst(spec):
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

// readHostFile is one of this machine's files the pod's are made from;
// none when it cannot be read (no resolver configured: the pod gets none
// either).
func readHostFile(path string) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return data
}

// etcFiles are the replica's hosts file and resolv.conf. An image's
// container has a network and a filesystem of its own and gets the
// managed hosts file, with the replica's address (127.0.0.1 in the shared
// network); inHostNetwork is for a process of this machine in its
// network (ko://, knit:// in the shared network), which gets the
// host-network one, as a hostNetwork pod does. The kubelet's warnings are
// logged.
func (r *replica) etcFiles(inHostNetwork bool) (hosts, resolv []byte) {
	if inHostNetwork {
		hosts = hostNetworkHosts(readHostFile(hostHosts), r.spec.HostAliases)
	} else {
		ip := r.pod.IP
		if ip == "" {
			ip = loopback
		}
		hosts = managedHosts(ip, podHostname(r.pod.Name), r.spec.HostAliases)
	}
	resolv, warnings := podResolvConf(r.spec, readHostFile(hostResolvConf), r.clusterResolver())
	for _, w := range warnings {
		r.log.Info("DNS configuration cut to the kubelet's limits", "warning", w)
	}
	return hosts, resolv
}

// clusterResolver is the replica's cluster DNS: its gateway, if it has
// one.
func (r *replica) clusterResolver() clusterResolver {
	return clusterResolver{server: r.net.clusterDNS(), namespace: r.pod.Namespace}
}

// writeEtcFile writes data to dir/name whole: written aside, then renamed
// over, so a container starting meanwhile binds either file, never half
// of one.
func writeEtcFile(dir, name string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(tmp.Name(), path)
}

// processEtcMounts are the binds that give a container of knit dev's own
// making (ko://, knit://), which otherwise reads this machine's /etc/hosts
// and /etc/resolv.conf, the pod's where the pod makes them its own:
// hostAliases, dnsPolicy None or a dnsConfig. They are written into the
// replica's own directory, and need the container's view (root on
// Linux): elsewhere such a container fails, final for the template,
// rather than run resolving names otherwise than its pod says.
func (r *replica) processEtcMounts(c *corev1.Container) ([]bindMount, *failure) {
	ownHosts, ownResolv := len(r.spec.HostAliases) > 0, ownResolvConf(r.spec, r.clusterResolver())
	if !ownHosts && !ownResolv {
		return nil, nil
	}
	if err := mountSupport(); err != nil {
		return nil, &failure{Reason: ReasonPodSpecUnsupported, Message: fmt.Sprintf(
			"container %s cannot be given the pod's hostAliases, dnsPolicy or dnsConfig: %v", c.Name, err)}
	}
	hosts, resolv := r.etcFiles(r.net == nil || r.net.ns == nil)
	dir := filepath.Join(r.volumesDir(), "..etc")
	var mounts []bindMount
	for _, f := range []struct {
		own          bool
		name, target string
		data         []byte
	}{{ownHosts, "hosts", hostHosts, hosts}, {ownResolv, "resolv.conf", hostResolvConf, resolv}} {
		if !f.own {
			continue
		}
		path, err := writeEtcFile(dir, f.name, f.data)
		if err != nil {
			return nil, &failure{Reason: ReasonRunContainerError, Message: fmt.Sprintf("container %s: %s: %v", c.Name, f.target, err)}
		}
		// Writable, as containerd binds a pod's unless its root is read-only.
		mounts = append(mounts, bindMount{volume: f.target, source: path, target: f.target})
	}
	return mounts, nil
}
