//go:build !unit

package runtime

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knitops/knit/internal/poll"
)

// An app in an isolated replica network that binds every interface is
// reachable at the replica's address and not on this machine's loopback,
// and runs in a network namespace of its own; closing the network removes
// its veth pair.
func TestIsolatedNetworkIsReachableOnlyAtItsAddress(t *testing.T) {
	if os.Geteuid() != 0 {
		// Not root: knit dev falls back to shared networks, and says why.
		if err := CheckIsolation(); err == nil {
			t.Fatal("isolated replica networks work without root; knit dev would not need to fall back")
		}
		return
	}
	pool, err := newNetPool()
	if err != nil {
		t.Fatal(err)
	}
	defer pool.closeSpare()
	n, err := pool.open()
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			n.close()
		}
	}()
	port, err := freeLoopbackPort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(httpServer)
	cmd.Env = []string{"PORT=" + strconv.Itoa(int(port)), "LISTEN_HOST=0.0.0.0", "GREETING=isolated"}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.startCmd(cmd); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stderr).ReadString('\n') // said before it binds
	if err != nil || !strings.Contains(line, "listening on 0.0.0.0:") {
		t.Fatalf("the app did not say it listens: %q %v", line, err)
	}
	go io.Copy(io.Discard, stderr)

	addr := net.JoinHostPort(n.ip, strconv.Itoa(int(port)))
	var resp *http.Response
	poll.Until(t, "the app answering at its replica's address "+addr, 10*time.Millisecond, 30*time.Second, func(context.Context) (bool, string) {
		resp, err = http.Get("http://" + addr + "/")
		return err == nil, fmt.Sprint(err)
	})
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "isolated") {
		t.Errorf("answer at %s: %q", addr, body)
	}
	if c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port)))); err == nil {
		c.Close()
		t.Errorf("the app answers on this machine's 127.0.0.1:%d", port)
	}
	mine, _ := os.Readlink("/proc/self/ns/net")
	its, err := os.Readlink("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/ns/net")
	if err != nil || its == mine {
		t.Errorf("the app's network namespace %q (%v) is this process's %q", its, err, mine)
	}

	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	closed = true
	if err := n.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.InterfaceByName(hostLinkName(n.ns.slot)); err == nil {
		t.Errorf("the veth %s outlived its replica network", hostLinkName(n.ns.slot))
	}
}

// TestPoolKeepsASpareNetwork: after a network is handed out another is
// made ahead of need, the next open hands that one out (up, addressed),
// and at shutdown the spare's veth pair is removed.
func TestPoolKeepsASpareNetwork(t *testing.T) {
	if os.Geteuid() != 0 {
		return // no isolated networks without root (TestIsolatedNetworkIsReachableOnlyAtItsAddress says so)
	}
	pool, err := newNetPool()
	if err != nil {
		t.Fatal(err)
	}
	first, err := pool.open()
	if err != nil {
		t.Fatal(err)
	}
	defer first.close()
	spare := waitSpare(t, pool)
	second, err := pool.open()
	if err != nil {
		t.Fatal(err)
	}
	defer second.close()
	if second != spare {
		t.Fatalf("open made a network (slot %d) while the spare (slot %d) waited", second.ns.slot, spare.ns.slot)
	}
	if iface, err := net.InterfaceByName(hostLinkName(second.ns.slot)); err != nil || iface.Flags&net.FlagUp == 0 {
		t.Errorf("the spare's veth %s: %v, %v; want it up", hostLinkName(second.ns.slot), iface, err)
	}
	third := waitSpare(t, pool)
	if err := pool.closeSpare(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.InterfaceByName(hostLinkName(third.ns.slot)); err == nil {
		t.Errorf("the spare's veth %s outlived the pool's shutdown", hostLinkName(third.ns.slot))
	}
	if n, err := pool.open(); err != nil || n == third {
		t.Errorf("open after shutdown = %v, %v; want a network of its own", n, err)
	} else {
		n.close()
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if pool.spare != nil || pool.refilling {
		t.Error("a closed pool makes spares")
	}
}

func waitSpare(t *testing.T, pool *netPool) *podNetwork {
	t.Helper()
	var spare *podNetwork
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
