package etcfiles

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// hostAliases are written after the kubelet's own entries, under its
// comment, one line per IP with its names tab-separated; a host-network
// pod's file is the node's, under its own header, then the same.
func TestHostsFileAsTheKubeletWritesIt(t *testing.T) {
	aliases := []corev1.HostAlias{
		{IP: "10.1.2.3", Hostnames: []string{"foo.local", "bar.local"}},
		{IP: "10.1.2.4", Hostnames: []string{"baz.local"}},
	}
	got := string(Hosts("169.254.64.2", "hello-abc-1", aliases))
	want := "# Kubernetes-managed hosts file.\n" +
		"127.0.0.1\tlocalhost\n" +
		"::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"fe00::0\tip6-localnet\n" +
		"fe00::0\tip6-mcastprefix\n" +
		"fe00::1\tip6-allnodes\n" +
		"fe00::2\tip6-allrouters\n" +
		"169.254.64.2\thello-abc-1\n" +
		"\n# Entries added by HostAliases.\n" +
		"10.1.2.3\tfoo.local\tbar.local\n" +
		"10.1.2.4\tbaz.local\n"
	if got != want {
		t.Errorf("managed hosts file:\n%s\nwant:\n%s", got, want)
	}
	if got := string(Hosts("127.0.0.1", "p", nil)); strings.Contains(got, "HostAliases") {
		t.Errorf("without hostAliases the file has their section:\n%s", got)
	}

	node := "127.0.0.1 localhost\n192.168.1.5 dev-box\n"
	got = string(HostNetworkHosts([]byte(node), aliases[:1]))
	want = "# Kubernetes-managed hosts file (host network).\n" + node +
		"\n# Entries added by HostAliases.\n10.1.2.3\tfoo.local\tbar.local\n"
	if got != want {
		t.Errorf("host-network hosts file:\n%s\nwant:\n%s", got, want)
	}
}

// resolv.conf as the kubelet builds it with no cluster DNS (a replica in
// the shared network has none) and containerd writes it: the host's for ClusterFirst and
// Default, only dnsConfig for None, a dnsConfig merged as the kubelet
// merges it, within its limits.
func TestResolvConfAsTheKubeletBuildsIt(t *testing.T) {
	host := "# host's\nnameserver 10.0.0.53\nnameserver 10.0.0.54\nsearch corp.example. lab.example\noptions ndots:2 timeout:3\n"
	long := strings.Repeat("a", 254)
	for _, tc := range []struct {
		name     string
		spec     corev1.PodSpec
		want     string
		warnings int
	}{
		{"ClusterFirst: the host's, unchanged", corev1.PodSpec{DNSPolicy: corev1.DNSClusterFirst}, host, 0},
		{"unset: the host's, unchanged", corev1.PodSpec{}, host, 0},
		{"Default: the host's, unchanged", corev1.PodSpec{DNSPolicy: corev1.DNSDefault}, host, 0},
		{"None: dnsConfig alone", corev1.PodSpec{DNSPolicy: corev1.DNSNone, DNSConfig: &corev1.PodDNSConfig{
			Nameservers: []string{"1.1.1.1"}, Searches: []string{"ns1.svc.example"},
			Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("1")}, {Name: "edns0"}},
		}}, "search ns1.svc.example\nnameserver 1.1.1.1\noptions ndots:1 edns0\n", 0},
		{"ClusterFirst with dnsConfig: merged into the host's", corev1.PodSpec{DNSPolicy: corev1.DNSClusterFirst, DNSConfig: &corev1.PodDNSConfig{
			Nameservers: []string{"10.0.0.54", "1.1.1.1"}, Searches: []string{"lab.example", "mine.example"},
			Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("5")}, {Name: "single-request"}},
		}}, "search corp.example lab.example mine.example\nnameserver 10.0.0.53\nnameserver 10.0.0.54\nnameserver 1.1.1.1\noptions ndots:5 timeout:3 single-request\n", 0},
		{"nameservers over three are dropped", corev1.PodSpec{DNSPolicy: corev1.DNSDefault, DNSConfig: &corev1.PodDNSConfig{
			Nameservers: []string{"1.1.1.1", "8.8.8.8"},
		}}, "search corp.example lab.example\nnameserver 10.0.0.53\nnameserver 10.0.0.54\nnameserver 1.1.1.1\noptions ndots:2 timeout:3\n", 1},
		{"a search path longer than a DNS name is dropped", corev1.PodSpec{DNSPolicy: corev1.DNSNone, DNSConfig: &corev1.PodDNSConfig{
			Nameservers: []string{"1.1.1.1"}, Searches: []string{long, "ok.example"},
		}}, "search ok.example\nnameserver 1.1.1.1\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings := ResolvConf(&tc.spec, []byte(host), ClusterDNS{})
			if string(got) != tc.want || len(warnings) != tc.warnings {
				t.Errorf("resolv.conf:\n%s\nwarnings %q\nwant:\n%s\nand %d warnings", got, warnings, tc.want, tc.warnings)
			}
		})
	}
}

// With a cluster DNS (an isolated replica's gateway) ClusterFirst names
// it with the namespace's and cluster's search domains before the
// host's and ndots:5, as the kubelet does; a dnsConfig merges into that;
// Default and None are as without one.
func TestResolvConfWithClusterDNS(t *testing.T) {
	host := "nameserver 10.0.0.53\nsearch corp.example\noptions ndots:2 timeout:3\n"
	cluster := ClusterDNS{Server: "169.254.64.1", Namespace: "shop"}
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want string
	}{
		{"unset is ClusterFirst", corev1.PodSpec{},
			"search shop.svc.cluster.local svc.cluster.local cluster.local corp.example\nnameserver 169.254.64.1\noptions ndots:5\n"},
		{"ClusterFirstWithHostNet off the host's network", corev1.PodSpec{DNSPolicy: corev1.DNSClusterFirstWithHostNet},
			"search shop.svc.cluster.local svc.cluster.local cluster.local corp.example\nnameserver 169.254.64.1\noptions ndots:5\n"},
		{"ClusterFirst with dnsConfig", corev1.PodSpec{DNSConfig: &corev1.PodDNSConfig{
			Searches: []string{"lab.example"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}}}},
			"search shop.svc.cluster.local svc.cluster.local cluster.local corp.example lab.example\nnameserver 169.254.64.1\noptions ndots:2\n"},
		{"Default: the host's", corev1.PodSpec{DNSPolicy: corev1.DNSDefault}, host},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := ResolvConf(&tc.spec, []byte(host), cluster)
			if string(got) != tc.want {
				t.Errorf("resolv.conf:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// The search line is cut as the kubelet cuts it: to 32 paths, then from
// the end while it is longer than 2048 characters.
func TestResolvConfSearchLimits(t *testing.T) {
	var many []string
	for i := range 40 {
		many = append(many, strings.Repeat("d", 60)+string(rune('a'+i%26))+".example")
	}
	got, cut := limitSearches(many)
	if !cut || len(got) > maxDNSSearchPaths || len(strings.Join(got, " ")) > maxDNSSearchListChars {
		t.Fatalf("%d paths, %d characters, cut %v", len(got), len(strings.Join(got, " ")), cut)
	}
	if len(got) != 29 || got[0] != many[0] { // 29 × 70 + 28 spaces ≤ 2048 < 30 × 70 + 29
		t.Errorf("kept %d paths from %q; want the first 29", len(got), got[0])
	}
}
