//go:build !unit

package e2e

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// listener is one listening TCP socket of a process.
type listener struct {
	pid     int
	command string
	netns   string
	addr    net.IP
	port    int
}

func (l listener) String() string {
	return fmt.Sprintf("pid %d (%s) %s", l.pid, l.command, net.JoinHostPort(l.addr.String(), strconv.Itoa(l.port)))
}

// Knit dev and everything it starts listen on loopback only in this
// machine's network: the API server, etcd, the webhooks, the ingress, the
// activator, the Git server (metrics are off) — but for each isolated
// replica's gateway, which listens at the host's end of the replica's
// veth pair and answers that replica alone. As root on Linux every
// replica runs in a network namespace of its own, so an app that binds
// every interface (helloworld binds ":"+PORT) is reachable through the
// ingress and neither on this machine's 127.0.0.1 nor on any of its other
// addresses.
func TestKnitDevListensOnLoopbackOnlyAndIsolatesReplicas(t *testing.T) {
	d := startKnitDev(t, t.TempDir())
	host := "open.default.localhost"
	d.apply(t, helloService("open", "1", "open"))
	waitBody(t, d.httpAddr, host, "Hello open!", 3*time.Minute)

	self, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	var here, isolated []listener
	for _, pid := range append([]int{d.cmd.Process.Pid}, descendants(t, d.cmd.Process.Pid)...) {
		for _, l := range listeners(pid) {
			if l.netns == self {
				here = append(here, l)
			} else {
				isolated = append(isolated, l)
			}
		}
	}
	t.Logf("listening in this machine's network:\n  %s", strings.Join(strs(here), "\n  "))
	t.Logf("listening in replicas' own networks:\n  %s", strings.Join(strs(isolated), "\n  "))
	_, ingressPort, _ := net.SplitHostPort(d.httpAddr)
	if !slices.ContainsFunc(here, func(l listener) bool { return strconv.Itoa(l.port) == ingressPort && l.pid == d.cmd.Process.Pid }) {
		t.Fatalf("the scan did not find the ingress on %s among knit dev's listeners", d.httpAddr)
	}
	var gateways []listener
	for _, l := range here {
		switch {
		case l.addr.IsLoopback():
		case isGateway(l, d.cmd.Process.Pid, ingressPort):
			gateways = append(gateways, l)
		default:
			t.Errorf("listens beyond loopback: %s", l)
		}
	}
	// A replica's gateway (DNS and the ingress, at the host's end of its
	// veth) answers that replica alone: this machine gets nothing there.
	for _, g := range gateways {
		if g.port != 53 {
			refusesThisMachine(t, g)
		}
	}

	app := replicaPIDs(t, func(argv []string) bool { return filepath.Base(argv[0]) == "helloworld" })
	if len(app) != 1 {
		t.Fatalf("%d helloworld processes, want 1", len(app))
	}
	port := envOf(t, app[0], "PORT")
	if os.Geteuid() != 0 {
		// Not root: replicas share this machine's network, as documented;
		// knit dev says so and asks apps to bind loopback.
		if !strings.Contains(d.output.String(), "replicas     shared") || envOf(t, app[0], "HOST") != "127.0.0.1" {
			t.Fatalf("without root knit dev neither says replicas share the network nor sets HOST=127.0.0.1 for port %s:\n%s", port, d.output)
		}
		return
	}
	if !strings.Contains(d.output.String(), "replicas     isolated") {
		t.Fatalf("knit dev runs as root but does not isolate replicas:\n%s", d.output)
	}
	appNS, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", app[0]))
	if appNS == self {
		t.Fatalf("the app runs in this machine's network namespace")
	}
	if !slices.ContainsFunc(isolated, func(l listener) bool {
		return l.pid == app[0] && strconv.Itoa(l.port) == port && l.addr.IsUnspecified()
	}) {
		t.Fatalf("the app does not listen on every interface of its own network on port %s: the case this test is about did not happen", port)
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	targets := []string{net.JoinHostPort("127.0.0.1", port)}
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.To4() == nil && ipn.IP.IsLinkLocalUnicast() { // IPv6 link-local needs a zone
			continue
		}
		targets = append(targets, net.JoinHostPort(ipn.IP.String(), port))
	}
	for _, target := range targets {
		if c, err := net.DialTimeout("tcp", target, 2*time.Second); err == nil {
			c.Close()
			t.Errorf("the app is reachable at %s, not only through knit", target)
		}
	}
	t.Logf("the app's port %s refused on %s", port, strings.Join(targets, ", "))
	if code, body, err := get(d.httpAddr, host); err != nil || code != http.StatusOK {
		t.Errorf("through the ingress: %d %q %v", code, body, err)
	}
}

func strs(ls []listener) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.String()
	}
	return out
}

// descendants are every process below pid, found through /proc's parent
// links.
func descendants(t *testing.T, pid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	children := map[int][]int{}
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 {
			continue
		}
		p, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		ppid, _ := strconv.Atoi(fields[1])
		children[ppid] = append(children[ppid], p)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		out = append(out, children[next]...)
		queue = append(queue, children[next]...)
	}
	return out
}

// listeners are the TCP sockets pid listens on: its socket inodes matched
// against its network namespace's /proc/net/tcp and tcp6.
func listeners(pid int) []listener {
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	inodes := map[string]bool{}
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && strings.HasPrefix(target, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	ns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	command := filepath.Base(strings.SplitN(string(cmdline), "\x00", 2)[0])
	var out []listener
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] { // 0A: LISTEN
				continue
			}
			ip, port := parseProcAddr(fields[1])
			out = append(out, listener{pid: pid, command: command, netns: ns, addr: ip, port: port})
		}
		f.Close()
	}
	return out
}

// parseProcAddr reads /proc/net/tcp's "0100007F:1F90": the address as
// the kernel stores it (32-bit words in host order, little-endian here),
// then the port.
func parseProcAddr(s string) (net.IP, int) {
	hexIP, hexPort, _ := strings.Cut(s, ":")
	raw, _ := hex.DecodeString(hexIP)
	for i := 0; i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, _ := strconv.ParseInt(hexPort, 16, 32)
	return net.IP(raw), int(port)
}

// envOf is one variable of a process's environment.
func envOf(t *testing.T, pid int, name string) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(string(data), "\x00") {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	t.Fatalf("process %d has no %s", pid, name)
	return ""
}

// replicaGateways is the range of isolated replicas' veth pairs.
var replicaGateways = &net.IPNet{IP: net.IPv4(169, 254, 64, 0), Mask: net.CIDRMask(18, 32)}

// isGateway says whether l is knit dev's listener at a replica's gateway:
// DNS, or the ingress on port 80 or on its own port.
func isGateway(l listener, knit int, ingressPort string) bool {
	return l.pid == knit && replicaGateways.Contains(l.addr) &&
		(l.port == 53 || l.port == 80 || strconv.Itoa(l.port) == ingressPort)
}

// refusesThisMachine checks that a gateway's HTTP listener closes a
// connection from this machine without an answer.
func refusesThisMachine(t *testing.T, g listener) {
	t.Helper()
	c, err := net.DialTimeout("tcp", net.JoinHostPort(g.addr.String(), strconv.Itoa(g.port)), 2*time.Second)
	if err != nil {
		return
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: open.default.svc.cluster.local\r\n\r\n")
	if line, err := bufio.NewReader(c).ReadString('\n'); err == nil {
		t.Errorf("the gateway %s answered this machine: %q", g, line)
	}
}
