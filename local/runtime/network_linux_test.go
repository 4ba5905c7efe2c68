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
	"github.com/knitops/knit/local/netns"
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
	pool, err := netns.NewPool()
	if err != nil {
		t.Fatal(err)
	}
	defer pool.CloseSpare()
	ns, err := pool.Open()
	if err != nil {
		t.Fatal(err)
	}
	n := isolatedNetwork(ns)
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
	if _, err := net.InterfaceByName(ns.HostLink()); err == nil {
		t.Errorf("the veth %s outlived its replica network", ns.HostLink())
	}
}
