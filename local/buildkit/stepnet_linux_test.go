package buildkit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
)

// A knit dev killed before it removed its steps' network leaves the
// bridge and veth behind; the next one in the same state directory
// replaces them, and Close removes them.
func TestStepNetworkReplacesAKilledOnesAndCloseRemovesIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "buildkit")
	if os.Geteuid() != 0 {
		// Without root a bridge cannot be made: the step network must
		// refuse to open, not half-open (knit dev then says so).
		if n, err := openStepNetwork(dir, DefaultStepSubnet); err == nil {
			n.Close()
			t.Fatal("the steps' network opened without root")
		}
		return
	}
	bridge, veth := stepLinks(dir)
	killed, err := openStepNetwork(dir, DefaultStepSubnet)
	if err != nil {
		t.Fatal(err)
	}
	killed.listener.Close() // what dies with the process; the links stay
	killed.ns.Close()
	n, err := openStepNetwork(dir, DefaultStepSubnet)
	if err != nil {
		t.Fatalf("over a killed knit dev's links: %v", err)
	}
	if want := stepGateway(DefaultStepSubnet).String() + ":3128"; n.listener.Addr().String() != want {
		t.Errorf("the proxy listens on %s, want %s", n.listener.Addr(), want)
	}
	for _, name := range []string{bridge, veth} {
		if _, err := netlink.LinkByName(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// This machine's IP stack stays closed on the bridge: no IPv6
	// link-local address, IPv4 from the steps dropped, no ARP answers.
	for path, want := range map[string]string{
		"/proc/sys/net/ipv6/conf/" + bridge + "/disable_ipv6": "1",
		"/proc/sys/net/ipv4/conf/" + bridge + "/rp_filter":    "1",
		"/proc/sys/net/ipv4/conf/" + bridge + "/arp_ignore":   "8",
	} {
		if b, err := os.ReadFile(path); err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("%s = %q, %v; want %s", path, b, err, want)
		}
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{bridge, veth} {
		var notFound netlink.LinkNotFoundError
		if _, err := netlink.LinkByName(name); !errors.As(err, &notFound) {
			t.Errorf("%s after Close: %v, want it gone", name, err)
		}
	}
}
