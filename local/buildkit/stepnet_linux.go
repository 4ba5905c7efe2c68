package buildkit

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	goruntime "runtime"
	"strconv"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"
)

// stepNetwork is what RUN steps reach when the operator allows them
// hosts: a bridge this machine holds no address on, where buildkitd's
// CNI plugin puts each step's interface, and on it a network namespace
// of the proxy's own, holding the gateway address and nothing listening
// there but the proxy. The gateway is not this machine's address because
// then every service of this machine's listening on all addresses would
// be a step's peer too.
type stepNetwork struct {
	bridge, veth string
	ns           vnetns.NsHandle
	// listener is the proxy's, on the gateway in the namespace: a socket
	// keeps the namespace it was made in, whichever thread accepts on it.
	listener net.Listener
}

// openStepNetwork makes the bridge, the proxy's namespace and the veth
// pair between them, replacing what a killed knit dev of the same state
// directory left, and listens on the gateway.
func openStepNetwork(dir string, subnet netip.Prefix) (_ *stepNetwork, err error) {
	bridge, veth := stepLinks(dir)
	host, err := vnetns.GetFromPath("/proc/self/ns/net")
	if err != nil {
		return nil, fmt.Errorf("this process's network namespace: %w", err)
	}
	defer host.Close()
	n := &stepNetwork{bridge: bridge, veth: veth, ns: -1}
	defer func() {
		if err != nil {
			_ = n.Close()
		}
	}()
	hostH, err := netlink.NewHandleAt(host)
	if err != nil {
		return nil, fmt.Errorf("netlink: %w", err)
	}
	defer hostH.Close()
	if err := removeLinks(hostH, veth, bridge); err != nil {
		return nil, err
	}
	if err := makeBridge(hostH, bridge); err != nil {
		return nil, err
	}
	var proxyH *netlink.Handle
	if n.ns, proxyH, err = newNamespace(host); err != nil {
		return nil, err
	}
	defer proxyH.Close()
	if err := plugProxy(hostH, proxyH, n.ns, bridge, veth, subnet); err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(stepGateway(subnet).String(), strconv.Itoa(proxyPort))
	if n.listener, err = listenIn(n.ns, host, addr); err != nil {
		return nil, err
	}
	return n, nil
}

// removeLinks deletes the named links if they exist.
func removeLinks(h *netlink.Handle, names ...string) error {
	for _, name := range names {
		link, err := h.LinkByName(name)
		var notFound netlink.LinkNotFoundError
		if errors.As(err, &notFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("look for %s: %w", name, err)
		}
		if err := h.LinkDel(link); err != nil {
			return fmt.Errorf("remove a killed knit dev's %s: %w", name, err)
		}
	}
	return nil
}

// makeBridge makes the steps' bridge, up, with this machine's IP stack
// closed on it: no IPv6 link-local address, and IPv4 packets from the
// steps' subnet dropped by strict reverse-path filtering, since this
// machine has no route to that subnet there. A step with CAP_NET_RAW can
// craft packets to this machine's other addresses; these settings leave
// them nothing to be answered.
func makeBridge(h *netlink.Handle, name string) error {
	if err := h.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}); err != nil {
		return fmt.Errorf("bridge %s for RUN steps: %w", name, err)
	}
	for _, s := range []struct{ path, value string }{
		{"/proc/sys/net/ipv6/conf/" + name + "/disable_ipv6", "1"},
		{"/proc/sys/net/ipv4/conf/" + name + "/rp_filter", "1"},
		{"/proc/sys/net/ipv4/conf/" + name + "/arp_ignore", "8"},
	} {
		if err := os.WriteFile(s.path, []byte(s.value), 0o644); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("bridge %s for RUN steps: %w", name, err)
		}
	}
	link, err := h.LinkByName(name)
	if err != nil {
		return fmt.Errorf("bridge %s for RUN steps: %w", name, err)
	}
	if err := h.LinkSetUp(link); err != nil {
		return fmt.Errorf("bridge %s for RUN steps: up: %w", name, err)
	}
	return nil
}

// newNamespace makes a network namespace and a netlink handle into it,
// on a thread of its own that returns to host or dies with its goroutine.
func newNamespace(host vnetns.NsHandle) (vnetns.NsHandle, *netlink.Handle, error) {
	type result struct {
		ns  vnetns.NsHandle
		h   *netlink.Handle
		err error
	}
	done := make(chan result, 1)
	go func() {
		goruntime.LockOSThread()
		var r result
		defer func() { done <- r }()
		if r.ns, r.err = vnetns.New(); r.err != nil {
			if vnetns.Set(host) == nil {
				goruntime.UnlockOSThread()
			}
			r.err = fmt.Errorf("the build proxy's network namespace: %w", r.err)
			return
		}
		r.h, r.err = netlink.NewHandle()
		if back := vnetns.Set(host); back != nil {
			r.err = errors.Join(r.err, fmt.Errorf("return to this process's network namespace: %w", back))
		} else {
			goruntime.UnlockOSThread()
		}
		if r.err != nil {
			if r.h != nil {
				r.h.Close()
			}
			r.ns.Close()
		}
	}()
	r := <-done
	return r.ns, r.h, r.err
}

// plugProxy connects the proxy's namespace to the bridge: a veth pair,
// the host's end a port of the bridge, the other end eth0 in ns with the
// gateway address.
func plugProxy(hostH, proxyH *netlink.Handle, ns vnetns.NsHandle, bridge, veth string, subnet netip.Prefix) error {
	br, err := hostH.LinkByName(bridge)
	if err != nil {
		return err
	}
	pair := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: veth, MasterIndex: br.Attrs().Index}, PeerName: "eth0", PeerNamespace: netlink.NsFd(ns)}
	if err := hostH.LinkAdd(pair); err != nil {
		return fmt.Errorf("veth %s for the build proxy: %w", veth, err)
	}
	gw := &net.IPNet{IP: stepGateway(subnet).AsSlice(), Mask: net.CIDRMask(subnet.Bits(), 32)}
	steps := []struct {
		what string
		do   func() error
	}{
		{"bring up the host's end", func() error { return linkUp(hostH, veth) }},
		{"bring up the proxy's loopback", func() error { return linkUp(proxyH, "lo") }},
		{"address the proxy's end", func() error {
			link, err := proxyH.LinkByName("eth0")
			if err != nil {
				return err
			}
			return proxyH.AddrAdd(link, &netlink.Addr{IPNet: gw})
		}},
		{"bring up the proxy's end", func() error { return linkUp(proxyH, "eth0") }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return fmt.Errorf("build proxy's network: %s: %w", s.what, err)
		}
	}
	return nil
}

func linkUp(h *netlink.Handle, name string) error {
	link, err := h.LinkByName(name)
	if err != nil {
		return err
	}
	return h.LinkSetUp(link)
}

// listenIn listens on addr from inside ns, on a thread that steps in
// and back (or dies with its goroutine if it cannot).
func listenIn(ns, host vnetns.NsHandle, addr string) (net.Listener, error) {
	type result struct {
		l   net.Listener
		err error
	}
	done := make(chan result, 1)
	go func() {
		goruntime.LockOSThread()
		var r result
		defer func() { done <- r }()
		if r.err = vnetns.Set(ns); r.err != nil {
			goruntime.UnlockOSThread()
			r.err = fmt.Errorf("enter the build proxy's network namespace: %w", r.err)
			return
		}
		r.l, r.err = net.Listen("tcp4", addr)
		if back := vnetns.Set(host); back != nil {
			r.err = errors.Join(r.err, fmt.Errorf("return to this process's network namespace: %w", back))
			if r.l != nil {
				r.l.Close()
				r.l = nil
			}
			return
		}
		goruntime.UnlockOSThread()
	}()
	r := <-done
	if r.err != nil {
		return nil, fmt.Errorf("build proxy on %s: %w", addr, r.err)
	}
	return r.l, nil
}

// Close removes the veth pair and the bridge and lets the namespace go.
// The proxy closes the listener; buildkitd, whose steps' interfaces are
// ports of the bridge, is stopped first.
func (n *stepNetwork) Close() error {
	if n == nil {
		return nil
	}
	var errs []error
	if n.listener != nil {
		_ = n.listener.Close()
	}
	if h, err := netlink.NewHandle(); err == nil {
		errs = append(errs, removeLinks(h, n.veth, n.bridge))
		h.Close()
	} else {
		errs = append(errs, err)
	}
	if n.ns >= 0 {
		errs = append(errs, n.ns.Close())
	}
	return errors.Join(errs...)
}
