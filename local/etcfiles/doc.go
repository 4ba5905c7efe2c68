// Package etcfiles renders the /etc/hosts and /etc/resolv.conf of a
// pod's containers as the kubelet (pkg/kubelet/kubelet_pods.go,
// pkg/kubelet/network/dns) and containerd's CRI plugin write them: the
// managed hosts file of a pod in a network of its own (Hosts) or a
// host-network pod's (HostNetworkHosts), with its hostAliases, and a
// resolv.conf from its dnsPolicy and dnsConfig, the node's own and the
// cluster's DNS (ResolvConf), cut to the kubelet's limits with its
// warnings. OwnResolvConf says whether a pod's resolv.conf differs from
// the node's at all.
//
// It only renders: it reads and writes no file. Which files a replica's
// containers get, where they are written and how they are bound in are
// package runtime's (etcfiles.go).
package etcfiles
