package dev

import (
	"errors"
	"fmt"
	"net"

	"github.com/knitops/knit/local/buildproxy"
	"github.com/knitops/knit/local/runtime"
)

// Options are the flags of `knit dev`.
type Options struct {
	// StateDir keeps everything that must survive a restart: etcd data,
	// keys, the kubeconfig, logs.
	StateDir string
	// BinDir holds the kube-apiserver and etcd that `make tools` built.
	BinDir string
	// HTTPAddr is the ingress: every Route's host is served here.
	HTTPAddr string
	// HTTPSAddr is the ingress over TLS, with certificates from
	// knit-system's Secrets and, for *.localhost, knit dev's own CA.
	HTTPSAddr string
	// GitAddr serves knit's Git repositories and forge webhooks.
	GitAddr string
	// MetricsAddr, when set, serves Prometheus metrics of every part of
	// knit dev (reconciles and work queues of each controller, the
	// activator, the autoscaler) at /metrics on it: what `knit controller`
	// serves on a cluster, for a user or a benchmark that wants to see a
	// resync finish. Empty serves none.
	MetricsAddr string
	// Kubeconfig, when set, points at an existing API server to use
	// instead of starting one.
	Kubeconfig string
	// ReplicaNetwork is where replicas listen: "isolated" (a network
	// namespace each: reachable only through knit, root on Linux),
	// "shared" (this machine's network, on loopback ports) or "auto", the
	// default: isolated when this machine allows it, else shared.
	ReplicaNetwork string
	// GitMaxPushBytes bounds one push to knit's Git server: a bigger one
	// is refused with a message git shows, nothing of it stored. 0 is
	// gitserver.DefaultMaxPushBytes.
	GitMaxPushBytes int64
	// GitMaxFetchBytes bounds what one fetch of a GitRepository may
	// bring, every file of its branch heads: heads that weigh more are not
	// synced (Synced=False, reason TooLarge). 0 is
	// gitsource.DefaultMaxFetchBytes.
	GitMaxFetchBytes int64
	// PlainHTTPRegistries are registries images may be pulled from over
	// plain HTTP ("host:port"), besides loopback ones, as containerd's
	// hosts.toml plain-http allows a host.
	PlainHTTPRegistries []string
	// BuildMirrors are registries dockerfile:// builds pull bases from
	// before the one a Dockerfile names: "docker.io=127.0.0.1:5000"
	// (several mirrors comma-separated; loopback ones in plain HTTP), as
	// buildkitd.toml's registry mirrors.
	BuildMirrors []string
	// BuildAllowHosts are the hosts dockerfile:// RUN steps may reach,
	// through a proxy knit dev runs: "pypi.org", "*.example.org:8443",
	// "127.0.0.1:8080" (several comma-separated; no port allows 80 and
	// 443), as package buildproxy reads them. Empty, the default, gives
	// steps no network: knit dev cannot know which registries a user's
	// builds need.
	BuildAllowHosts []string
	// Restart replaces the controllers at every receive, while the
	// ingress, the activator, the replicas, admission and the Git server
	// keep serving (`knit dev` sends on it at SIGHUP).
	Restart <-chan struct{}
}

// Defaults fills what the user left empty with knit dev's defaults.
func (o *Options) Defaults() {
	if o.StateDir == "" {
		o.StateDir = ".knit"
	}
	if o.BinDir == "" {
		o.BinDir = "bin"
	}
	if o.HTTPAddr == "" {
		o.HTTPAddr = "127.0.0.1:8080"
	}
	if o.HTTPSAddr == "" {
		o.HTTPSAddr = "127.0.0.1:8443"
	}
	if o.GitAddr == "" {
		o.GitAddr = "127.0.0.1:8090"
	}
	if o.ReplicaNetwork == "" {
		o.ReplicaNetwork = networkAuto
	}
}

// Validate reports the first flag that cannot work, before anything starts.
func (o *Options) Validate() error {
	var errs []error
	addrs := map[string]string{"--http-addr": o.HTTPAddr, "--https-addr": o.HTTPSAddr, "--git-addr": o.GitAddr}
	if o.MetricsAddr != "" {
		addrs["--metrics-addr"] = o.MetricsAddr
	}
	for flag, addr := range addrs {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", flag, addr, err))
		}
	}
	if _, err := buildproxy.ParseAllowList(o.BuildAllowHosts...); err != nil {
		errs = append(errs, err)
	}
	switch o.ReplicaNetwork {
	case networkAuto, string(runtime.NetworkIsolated), string(runtime.NetworkShared):
	default:
		errs = append(errs, fmt.Errorf("--replica-network %q: want auto, isolated or shared", o.ReplicaNetwork))
	}
	return errors.Join(errs...)
}
