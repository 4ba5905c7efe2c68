package runtime

import (
	"fmt"
	"io"
	"os/exec"
	goruntime "runtime"

	"github.com/knitops/knit/local/netns"
)

// Network is where a replica's processes listen, which decides who can
// reach an app that binds every interface, as most apps do when told only
// PORT.
type Network string

const (
	// NetworkShared runs every replica in this machine's own network, each
	// on loopback ports of its own. An app that binds every interface is
	// reachable from the network, not only through knit: nothing but root
	// can pick another process's bind address (a Go app binds with its own
	// system calls, so no LD_PRELOAD reaches it). Replicas get HOST=127.0.0.1,
	// which some frameworks bind to (Nuxt, Vite, Astro, create-react-app…).
	NetworkShared Network = "shared"
	// NetworkIsolated gives each replica a network namespace of its own, as
	// a pod has one: its containers share a loopback no other process sees,
	// and a veth pair with a link-local address (a /30 of 169.254.64.0/18)
	// is the only way in. An app binding every interface is reachable
	// through knit, and from this machine at that address as a pod is from
	// its node, never from the network nor on this machine's 127.0.0.1.
	// The replica's only egress is this machine's own addresses other than
	// loopback: no internet, no service bound to this machine's 127.0.0.1.
	// It needs root on Linux.
	NetworkIsolated Network = "isolated"
)

// podNetwork is one replica's network: the address its endpoints, probes
// and downward API name, and for an isolated replica the namespace its
// processes start in (package netns).
type podNetwork struct {
	ip   string
	host string           // this machine's address as the replica reaches it
	ns   *netns.Namespace // nil in the shared network
	// gateway serves DNS and the ingress at host (Options.Gateway); nil
	// when there is none.
	gateway io.Closer
}

// sharedNetwork is every replica's network in NetworkShared.
var sharedNetwork = &podNetwork{ip: loopback, host: loopback}

// openNetwork makes a new replica's network.
func (rt *Runtime) openNetwork() (*podNetwork, error) {
	if rt.netPool == nil {
		return sharedNetwork, nil
	}
	ns, err := rt.netPool.Open()
	if err != nil {
		return nil, err
	}
	n := isolatedNetwork(ns)
	if rt.opts.Gateway != nil {
		// A gateway that cannot listen (another server holds port 80 or
		// 53 on every address of this machine) costs the replica its
		// calls to other Services by name, not its start: it resolves as
		// this machine does instead.
		if n.gateway, err = rt.opts.Gateway.Open(n.host, n.ip); err != nil {
			rt.log.Info("A replica's gateway could not listen: it resolves names as this machine does and reaches no other Service by name",
				"gateway", n.host, "err", err.Error())
			n.gateway = nil
		}
	}
	return n, nil
}

// clusterDNS is the nameserver a replica's resolv.conf names as the
// cluster's (its gateway); "" when it has none.
func (n *podNetwork) clusterDNS() string {
	if n == nil || n.gateway == nil {
		return ""
	}
	return n.host
}

// isolatedNetwork is the network of a replica in a namespace of its own,
// at its end of the namespace's veth pair.
func isolatedNetwork(ns *netns.Namespace) *podNetwork {
	return &podNetwork{ip: ns.PodIP(), host: ns.HostIP(), ns: ns}
}

func (n *podNetwork) hostIP() string { return n.host }

// start starts cmd in the network. The caller's goroutine must be locked
// to its OS thread; stuck reports that the thread could not come back to
// this process's own namespace and must die with its goroutine (left
// locked) instead of serving others.
func (n *podNetwork) start(cmd *exec.Cmd) (stuck bool, err error) {
	if n == nil || n.ns == nil {
		return false, cmd.Start()
	}
	return n.ns.Start(cmd)
}

// close releases the namespace once no process runs in it.
func (n *podNetwork) close() error {
	if n == nil || n.ns == nil {
		return nil
	}
	if n.gateway != nil {
		_ = n.gateway.Close()
	}
	return n.ns.Close()
}

// CheckIsolation says whether this machine can give replicas networks of
// their own (NetworkIsolated): it makes one, with its veth pair, and
// removes it.
func CheckIsolation() error {
	pool, err := netns.NewPool()
	if err != nil {
		return err
	}
	// Open starts making the next network in the background; the check
	// needs none after it, and a spare left behind would live as long as
	// knit dev.
	defer pool.CloseSpare()
	n, err := pool.Open()
	if err != nil {
		return fmt.Errorf("isolated replica networks: %w", err)
	}
	return n.Close()
}

// run runs cmd in the network and waits for it.
func (n *podNetwork) run(cmd *exec.Cmd) error { return n.runAfter(cmd, nil) }

// runAfter runs cmd in the network, forked from a thread that first ran
// enter (nil: nothing), and waits for it.
func (n *podNetwork) runAfter(cmd *exec.Cmd, enter func() (stuck bool, err error)) error {
	if err := n.startCmdAfter(cmd, enter); err != nil {
		return err
	}
	return cmd.Wait()
}

// startCmd starts cmd in the network from a thread of its own, which
// start may leave stuck in the namespace (then the thread dies with its
// goroutine rather than serve another).
func (n *podNetwork) startCmd(cmd *exec.Cmd) error { return n.startCmdAfter(cmd, nil) }

// startCmdAfter is startCmd from a thread that first ran enter (a
// container's other namespaces), which may leave it stuck too.
func (n *podNetwork) startCmdAfter(cmd *exec.Cmd, enter func() (stuck bool, err error)) error {
	started := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		var stuck bool
		var err error
		if enter != nil {
			stuck, err = enter()
		}
		if err == nil {
			var inStuck bool
			inStuck, err = n.start(cmd)
			stuck = stuck || inStuck
		}
		if !stuck {
			goruntime.UnlockOSThread()
		}
		started <- err
	}()
	return <-started
}
