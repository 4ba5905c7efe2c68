package runtime

import (
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/local/etcfiles"
	"github.com/knitops/knit/local/view"
)

// The /etc/hosts and /etc/resolv.conf of a replica's containers, as the
// kubelet and containerd's CRI plugin write them for a pod's: what they
// say is package etcfiles's; which containers get them, and where they
// are written and bound, is here.

// hostResolvConf is the resolver configuration the kubelet's --resolv-conf
// names by default: this machine's.
const hostResolvConf = "/etc/resolv.conf"

// hostHosts is this machine's hosts file, the base of a host-network
// pod's.
const hostHosts = "/etc/hosts"

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
		hosts = etcfiles.HostNetworkHosts(readHostFile(hostHosts), r.spec.HostAliases)
	} else {
		ip := r.pod.IP
		if ip == "" {
			ip = loopback
		}
		hosts = etcfiles.Hosts(ip, view.Hostname(r.pod.Name), r.spec.HostAliases)
	}
	resolv, warnings := etcfiles.ResolvConf(r.spec, readHostFile(hostResolvConf), r.clusterDNS())
	for _, w := range warnings {
		r.log.Info("DNS configuration cut to the kubelet's limits", "warning", w)
	}
	return hosts, resolv
}

// clusterDNS is the replica's cluster DNS: its gateway, if it has one.
func (r *replica) clusterDNS() etcfiles.ClusterDNS {
	return etcfiles.ClusterDNS{Server: r.net.clusterDNS(), Namespace: r.pod.Namespace}
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
func (r *replica) processEtcMounts(c *corev1.Container) ([]view.Mount, *failure) {
	ownHosts, ownResolv := len(r.spec.HostAliases) > 0, etcfiles.OwnResolvConf(r.spec, r.clusterDNS())
	if !ownHosts && !ownResolv {
		return nil, nil
	}
	if err := view.Supported(); err != nil {
		return nil, &failure{Reason: ReasonPodSpecUnsupported, Message: fmt.Sprintf(
			"container %s cannot be given the pod's hostAliases, dnsPolicy or dnsConfig: %v", c.Name, err)}
	}
	hosts, resolv := r.etcFiles(r.net == nil || r.net.ns == nil)
	dir := filepath.Join(r.volumesDir(), "..etc")
	var mounts []view.Mount
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
		mounts = append(mounts, view.Mount{Volume: f.target, Source: path, Target: f.target})
	}
	return mounts, nil
}
