package buildkit

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-logr/logr"

	"github.com/knitops/knit/local/buildproxy"
)

// loopbackConf is RUN steps' network when no host is allowed: their own
// loopback, nothing else.
const loopbackConf = `{"cniVersion":"1.0.0","name":"` + stepNetworkName + `","type":"loopback"}` + "\n"

// stepEgress is RUN steps' way out: their network and the proxy on it.
type stepEgress struct {
	net   *stepNetwork
	proxy *buildproxy.Proxy
	url   string // http://gateway:port, as steps' HTTP_PROXY
	done  chan error
}

// stepNetworkConfig writes the CNI configuration buildkitd gives RUN
// steps and returns its path: loopback alone, or, when the operator
// allows hosts, the bridge to the proxy, which it starts.
func (d *Daemon) stepNetworkConfig() (string, error) {
	if len(d.opts.AllowHosts) == 0 {
		path := filepath.Join(d.opts.Dir, "cni-loopback.json")
		return path, os.WriteFile(path, []byte(loopbackConf), 0o600)
	}
	if err := checkStepSubnet(d.opts.StepSubnet); err != nil {
		return "", err
	}
	ipam := filepath.Join(d.opts.Dir, "cni-ipam")
	if err := os.RemoveAll(ipam); err != nil { // a killed knit dev's leases: its steps are gone
		return "", err
	}
	bridge, _ := stepLinks(d.opts.Dir)
	conf, err := stepConflist(bridge, d.opts.StepSubnet, ipam)
	if err != nil {
		return "", err
	}
	// .conflist: how buildkitd tells a list of plugins from one plugin.
	path := filepath.Join(d.opts.Dir, "cni-steps.conflist")
	if err := os.WriteFile(path, conf, 0o600); err != nil {
		return "", err
	}
	if d.egress, err = openStepEgress(d.opts.Dir, d.opts.StepSubnet, d.opts.AllowHosts, d.opts.Log); err != nil {
		return "", err
	}
	return path, nil
}

// openStepEgress makes RUN steps' network and serves the proxy on its
// gateway.
func openStepEgress(dir string, subnet netip.Prefix, allow buildproxy.AllowList, log logr.Logger) (*stepEgress, error) {
	n, err := openStepNetwork(dir, subnet)
	if err != nil {
		return nil, fmt.Errorf("RUN steps' network (--build-allow-host): %w", err)
	}
	p := buildproxy.New(buildproxy.Config{Allow: allow, Deny: []netip.Prefix{subnet}, Log: log.WithName("proxy")})
	e := &stepEgress{net: n, proxy: p, done: make(chan error, 1),
		url: "http://" + net.JoinHostPort(stepGateway(subnet).String(), strconv.Itoa(proxyPort))}
	go func() { e.done <- p.Serve(n.listener) }()
	log.Info("RUN steps reach the allowed hosts through the build proxy, and nothing else", "allow", allow.String(), "proxy", e.url)
	return e, nil
}

// Close stops the proxy and removes the network.
func (e *stepEgress) Close() error {
	err := e.proxy.Close()
	err = errors.Join(err, <-e.done)
	return errors.Join(err, e.net.Close())
}
