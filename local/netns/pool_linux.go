package netns

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	goruntime "runtime"
	"sync"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The isolated replicas' addresses: slot s is the /30 at
// 169.254.64.0 + 4s, the host's end of the veth .1 in it, the replica's
// .2. Link-local, so no router forwards them, and clear of 169.254.169.254
// (cloud metadata).
var (
	poolBase  = net.IPv4(169, 254, 64, 0).To4()
	poolSlots = 4096
	slotMask  = net.CIDRMask(30, 32)
)

// podInterface is the replica's end of its veth pair, as in a pod.
const podInterface = "eth0"

// Pool hands out replica networks, each a Namespace in a /30 of its own.
// Two knit devs on one machine never share a slot: the host's end of the
// veth is named after it, and the kernel refuses a second link of that
// name.
type Pool struct {
	host vnetns.NsHandle // this process's own network namespace
	mu   sync.Mutex
	used map[int]bool
	// spare is a network made ahead of need: a replica's start, on a cold
	// start's path, takes it rather than wait for the kernel to make a
	// namespace and a veth pair (2–10 ms here), and another is made in
	// the background. refilling says one is being made; closed that no
	// more are (shutdown).
	spare     *Namespace
	refilling bool
	closed    bool
}

// Namespace is an isolated replica's network namespace and the veth pair
// into it, addressed in its slot's /30.
type Namespace struct {
	pool     *Pool
	slot     int
	ns       vnetns.NsHandle
	ip, host string // the replica's end's address and the host's
}

// NewPool makes a pool of replica networks, remembering this process's
// own network namespace, where every thread returns after forking into
// one. It fails where network namespaces cannot be had.
func NewPool() (*Pool, error) {
	host, err := vnetns.GetFromPath("/proc/self/ns/net")
	if err != nil {
		return nil, fmt.Errorf("this process's network namespace: %w", err)
	}
	return &Pool{host: host, used: map[int]bool{}}, nil
}

func slotAddrs(slot int) (host, pod net.IP) {
	base := uint32(poolBase[0])<<24 | uint32(poolBase[1])<<16 | uint32(poolBase[2])<<8 | uint32(poolBase[3])
	a := base + uint32(slot)*4
	ip := func(v uint32) net.IP { return net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v)).To4() }
	return ip(a + 1), ip(a + 2)
}

func hostLinkName(slot int) string { return fmt.Sprintf("knr%03x", slot) }

// Open hands out a replica network: the spare if there is one, else one
// made now; either way another spare is then made in the background.
func (p *Pool) Open() (*Namespace, error) {
	p.mu.Lock()
	n := p.spare
	p.spare = nil
	p.mu.Unlock()
	var err error
	if n == nil {
		n, err = p.make()
	}
	p.Refill()
	return n, err
}

// Refill makes a spare network in the background unless there is one,
// one is being made, or the pool is closed: Open hands it out at once, on
// a cold start's path. Open refills by itself; a new pool's first spare
// is the caller's to ask for.
func (p *Pool) Refill() {
	p.mu.Lock()
	if p.spare != nil || p.refilling || p.closed {
		p.mu.Unlock()
		return
	}
	p.refilling = true
	p.mu.Unlock()
	go func() {
		n, err := p.make()
		p.mu.Lock()
		p.refilling = false
		keep := err == nil && !p.closed
		if keep {
			p.spare = n
		}
		p.mu.Unlock()
		if err == nil && !keep {
			_ = n.Close()
		}
	}()
}

// CloseSpare stops making spares and removes the one made, at shutdown.
// Networks handed out are their holders' to close.
func (p *Pool) CloseSpare() error {
	p.mu.Lock()
	p.closed = true
	n := p.spare
	p.spare = nil
	p.mu.Unlock()
	return n.Close()
}

// make makes a replica network in a free slot.
func (p *Pool) make() (*Namespace, error) {
	taken, err := p.hostSubnets()
	if err != nil {
		return nil, err
	}
	for range 32 {
		slot, ok := p.reserve(taken)
		if !ok {
			return nil, errors.New("no free replica network: every /30 of 169.254.64.0/18 is in use")
		}
		n, err := p.create(slot)
		if errors.Is(err, unix.EEXIST) { // another knit dev's
			continue
		}
		if err != nil {
			p.release(slot)
			return nil, err
		}
		return n, nil
	}
	return nil, errors.New("no free replica network after 32 tries")
}

// hostSubnets are the slots whose /30 holds an address of this machine:
// someone else's, never to be shadowed.
func (p *Pool) hostSubnets() (map[int]bool, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("this machine's addresses: %w", err)
	}
	taken := map[int]bool{}
	pool := net.IPNet{IP: poolBase, Mask: net.CIDRMask(18, 32)}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && pool.Contains(ipn.IP) {
			ip := ipn.IP.To4()
			taken[(int(ip[2]-poolBase[2])<<8|int(ip[3]))/4] = true
		}
	}
	return taken, nil
}

func (p *Pool) reserve(taken map[int]bool) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	start := rand.IntN(poolSlots)
	for i := range poolSlots {
		s := (start + i) % poolSlots
		if !p.used[s] && !taken[s] {
			p.used[s] = true
			return s, true
		}
	}
	return 0, false
}

func (p *Pool) release(slot int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.used, slot)
}

// create makes the namespace, its loopback, and the veth pair with both
// ends addressed and up and the replica's default route through the
// host's end. EEXIST: the slot is another process's.
func (p *Pool) create(slot int) (_ *Namespace, err error) {
	ns, hostH, podH, err := p.unshare()
	if err != nil {
		return nil, err
	}
	defer hostH.Close()
	defer podH.Close()
	hostIP, podIP := slotAddrs(slot)
	n := &Namespace{pool: p, slot: slot, ns: ns, ip: podIP.String(), host: hostIP.String()}
	name := hostLinkName(slot)
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: podInterface, PeerNamespace: netlink.NsFd(ns)}
	if err := hostH.LinkAdd(veth); err != nil {
		ns.Close()
		return nil, fmt.Errorf("veth %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			_ = hostH.LinkDel(veth)
			ns.Close()
		}
	}()
	steps := []struct {
		what string
		do   func() error
	}{
		{"address the host's end", func() error { return addrAdd(hostH, name, hostIP) }},
		{"bring up the host's end", func() error { return linkUp(hostH, name) }},
		{"bring up the replica's loopback", func() error { return linkUp(podH, "lo") }},
		{"address the replica's end", func() error { return addrAdd(podH, podInterface, podIP) }},
		{"bring up the replica's end", func() error { return linkUp(podH, podInterface) }},
		{"route the replica through the host", func() error {
			link, err := podH.LinkByName(podInterface)
			if err != nil {
				return err
			}
			return podH.RouteAdd(&netlink.Route{LinkIndex: link.Attrs().Index, Gw: hostIP})
		}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return nil, fmt.Errorf("replica network %s: %s: %w", name, s.what, err)
		}
	}
	return n, nil
}

func linkUp(h *netlink.Handle, name string) error {
	link, err := h.LinkByName(name)
	if err != nil {
		return err
	}
	return h.LinkSetUp(link)
}

// addrAdd gives the link name ip within its slot.
func addrAdd(h *netlink.Handle, name string, ip net.IP) error {
	link, err := h.LinkByName(name)
	if err != nil {
		return err
	}
	return h.AddrAdd(link, &netlink.Addr{IPNet: &net.IPNet{IP: ip, Mask: slotMask}})
}

// unshare makes a network namespace, with a netlink handle into it and
// one into this process's own. It runs on a thread of its own, which dies
// with its goroutine if it cannot come back.
func (p *Pool) unshare() (ns vnetns.NsHandle, hostH, podH *netlink.Handle, err error) {
	type result struct {
		ns          vnetns.NsHandle
		hostH, podH *netlink.Handle
		err         error
	}
	done := make(chan result, 1)
	go func() {
		goruntime.LockOSThread()
		var r result
		defer func() { done <- r }()
		if r.hostH, r.err = netlink.NewHandleAt(p.host); r.err != nil {
			goruntime.UnlockOSThread()
			return
		}
		if r.ns, r.err = vnetns.New(); r.err != nil { // the thread is in it now
			r.hostH.Close()
			if vnetns.Set(p.host) == nil {
				goruntime.UnlockOSThread()
			}
			r.err = fmt.Errorf("new network namespace: %w", r.err)
			return
		}
		r.podH, r.err = netlink.NewHandle()
		if back := vnetns.Set(p.host); back != nil {
			r.err = errors.Join(r.err, fmt.Errorf("return to this process's network namespace: %w", back))
		} else {
			goruntime.UnlockOSThread()
		}
		if r.err != nil {
			r.hostH.Close()
			if r.podH != nil {
				r.podH.Close()
			}
			r.ns.Close()
		}
	}()
	r := <-done
	return r.ns, r.hostH, r.podH, r.err
}

// PodIP is the replica's address, at its end of the veth pair (eth0): the
// address its endpoints, probes and downward API name.
func (n *Namespace) PodIP() string { return n.ip }

// HostIP is this machine's address as the replica reaches it: the host's
// end of the veth pair, the replica's default route.
func (n *Namespace) HostIP() string { return n.host }

// HostLink is the name of the host's end of the veth pair, as `ip link`
// lists it: what tells one knit dev's replica networks from another's.
func (n *Namespace) HostLink() string { return hostLinkName(n.slot) }

// Start starts cmd inside the namespace: the child is forked from this
// thread while it is in there. The caller's goroutine is locked to its
// thread; stuck reports that the thread could not come back to this
// process's own namespace and must die with its goroutine (left locked)
// instead of serving others.
func (n *Namespace) Start(cmd *exec.Cmd) (stuck bool, err error) {
	if err := vnetns.Set(n.ns); err != nil {
		return false, fmt.Errorf("enter the replica's network namespace: %w", err)
	}
	startErr := cmd.Start()
	if err := vnetns.Set(n.pool.host); err != nil {
		return true, errors.Join(startErr, fmt.Errorf("return to this process's network namespace: %w", err))
	}
	return false, startErr
}

// Close deletes the veth pair at once (the kernel would when the
// namespace goes, in its own time) and lets the namespace go, once no
// process runs in it; its slot can then be handed out again. Closing nil
// does nothing.
func (n *Namespace) Close() error {
	if n == nil {
		return nil
	}
	defer n.pool.release(n.slot)
	h, err := netlink.NewHandleAt(n.pool.host)
	if err == nil {
		defer h.Close()
		var link netlink.Link
		if link, err = h.LinkByName(hostLinkName(n.slot)); err == nil {
			err = h.LinkDel(link)
		}
		var notFound netlink.LinkNotFoundError
		if errors.As(err, &notFound) {
			err = nil
		}
	}
	return errors.Join(err, n.ns.Close())
}
