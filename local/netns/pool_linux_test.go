package netns

import (
	"context"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/knitops/knit/internal/endpointslices"
	"github.com/knitops/knit/internal/poll"
)

// TestPoolKeepsASpareNetwork: after a network is handed out another is
// made ahead of need, the next open hands that one out (up, addressed),
// and at shutdown the spare's veth pair is removed.
func TestPoolKeepsASpareNetwork(t *testing.T) {
	if os.Geteuid() != 0 {
		return // no isolated networks without root (package runtime's TestIsolatedNetworkIsReachableOnlyAtItsAddress says so)
	}
	pool, err := NewPool()
	if err != nil {
		t.Fatal(err)
	}
	first, err := pool.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	spare := waitSpare(t, pool)
	second, err := pool.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if second != spare {
		t.Fatalf("open made a network (slot %d) while the spare (slot %d) waited", second.slot, spare.slot)
	}
	if iface, err := net.InterfaceByName(hostLinkName(second.slot)); err != nil || iface.Flags&net.FlagUp == 0 {
		t.Errorf("the spare's veth %s: %v, %v; want it up", hostLinkName(second.slot), iface, err)
	}
	third := waitSpare(t, pool)
	if err := pool.CloseSpare(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.InterfaceByName(hostLinkName(third.slot)); err == nil {
		t.Errorf("the spare's veth %s outlived the pool's shutdown", hostLinkName(third.slot))
	}
	if n, err := pool.Open(); err != nil || n == third {
		t.Errorf("open after shutdown = %v, %v; want a network of its own", n, err)
	} else {
		n.Close()
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if pool.spare != nil || pool.refilling {
		t.Error("a closed pool makes spares")
	}
}

func waitSpare(t *testing.T, pool *Pool) *Namespace {
	t.Helper()
	var spare *Namespace
	poll.Until(t, "a spare network", 10*time.Millisecond, 10*time.Second, func(context.Context) (bool, string) {
		pool.mu.Lock()
		defer pool.mu.Unlock()
		spare = pool.spare
		return spare != nil, "none yet"
	})
	return spare
}

func TestSlotAddresses(t *testing.T) {
	for slot, want := range map[int][2]string{
		0:    {"169.254.64.1", "169.254.64.2"},
		1:    {"169.254.64.5", "169.254.64.6"},
		64:   {"169.254.65.1", "169.254.65.2"},
		4095: {"169.254.127.253", "169.254.127.254"},
	} {
		host, pod := slotAddrs(slot)
		if host.String() != want[0] || pod.String() != want[1] {
			t.Errorf("slot %d: host %s pod %s, want %v", slot, host, pod, want)
		}
	}
}

// The ingress, activator and autoscaler dial only addresses
// endpointslices trusts, and refuse link-local ones but knit dev's
// replica networks: the pool isolated replicas draw from must be that
// range, or no request ever reaches them.
func TestReplicaPoolIsTrusted(t *testing.T) {
	pool := netip.PrefixFrom(netip.AddrFrom4([4]byte(poolBase)), 18)
	if pool != endpointslices.ReplicaNetworks {
		t.Errorf("replica pool %s, endpointslices trusts %s", pool, endpointslices.ReplicaNetworks)
	}
}
