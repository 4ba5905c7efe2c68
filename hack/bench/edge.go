package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// The edge part: knit's ingress (edgeproxy, fast path on and off) beside
// nginx, each in front of the same knit-queue and app, over HTTP/1.1,
// HTTP/1.1 over TLS and h2 over TLS.
const (
	edgeHost       = "bench.default.localhost"
	edgeKnit       = "knit"
	edgeKnitNoFast = "knit-nofast"
	edgeNginx      = "nginx"
	// edgeHandshakes bounds the new connections timed per proxy, and
	// edgeHandshakeTime the time they may take.
	edgeHandshakes    = 400
	edgeHandshakeTime = 4 * time.Second
)

// edgeProtocol is how the load generator reaches an edge proxy.
type edgeProtocol string

const (
	edgeH1    edgeProtocol = "HTTP/1.1"
	edgeH1TLS edgeProtocol = "HTTP/1.1 + TLS"
	edgeH2TLS edgeProtocol = "h2 + TLS"
)

var edgeProtocols = []edgeProtocol{edgeH1, edgeH1TLS, edgeH2TLS}

// edgeProxy is one edge proxy process.
type edgeProxy struct {
	name, label string
	proc        *proxyProc
	tlsAddr     string
	// pprof is where knit's edge serves net/http/pprof, if it does.
	pprof string
	// pids are the processes its CPU is read from (nginx's master and
	// workers).
	pids []int
}

// edgeCell is one proxy at one protocol, shape and concurrency.
type edgeCell struct {
	proto  edgeProtocol
	shape  queuebench.Shape
	c      int
	proxy  string
	result queuebench.Result
	cpu    time.Duration
}

// handshakes are one proxy's new connections: TLS handshake, a GET, and
// its answer's first byte.
type handshakes struct {
	proxy    string
	n, errs  int
	p50, p99 time.Duration
	firstErr error
	cpu      time.Duration
	elapsed  time.Duration
}

// edgeResult is what the edge part measured.
type edgeResult struct {
	proxies    []string
	labels     map[string]string
	nginx      string // nginx's version, or empty
	nginxSkip  string // why nginx was not measured
	cells      []edgeCell
	handshakes []handshakes
	duration   time.Duration
	slices     int
	conc       []int
	machine    machine
	elapsed    time.Duration
}

// edgeSetup is what the edge part runs against.
type edgeSetup struct {
	app     *http.Server
	queue   *proxyProc
	proxies []*edgeProxy
}

func (s *edgeSetup) close() {
	for _, p := range s.proxies {
		p.stop()
	}
	if s.queue != nil {
		s.queue.stop()
	}
	if s.app != nil {
		s.app.Close()
	}
}

// stop ends the proxy's processes: nginx's workers are in the master's
// process group, which the bench started.
func (p *edgeProxy) stop() {
	if p.proc.cmd.Process != nil && p.name == edgeNginx {
		syscall.Kill(-p.proc.cmd.Process.Pid, syscall.SIGKILL)
	}
	p.proc.stop()
}

// measureEdge builds knit-queue and edgeproxy, starts the app, one
// knit-queue in front of it, and every edge proxy in front of that, and
// loads each proxy in turns, slice by slice, with every protocol, shape
// and concurrency; then it times new TLS connections.
func measureEdge(ctx context.Context, root string, o options, progress io.Writer) (*edgeResult, error) {
	began := time.Now()
	tmp, err := os.MkdirTemp("", "knit-bench-edge-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	knitQueue, edgeProxyBin, err := buildEdge(ctx, root, tmp)
	if err != nil {
		return nil, err
	}
	s, res, err := startEdge(ctx, tmp, knitQueue, edgeProxyBin)
	if err != nil {
		return nil, err
	}
	defer s.close()
	res.duration, res.slices, res.conc = o.edgeDuration, o.slices, o.edgeConcurrency
	for _, proto := range edgeProtocols {
		for _, shape := range queuebench.EdgeShapes() {
			for _, c := range o.edgeConcurrency {
				cells, err := measureEdgeCells(ctx, o, s, proto, shape, c)
				if err != nil {
					return nil, err
				}
				for _, cl := range cells {
					fmt.Fprintf(progress, "edge %-15s %-11s c%-4d %-12s %s  cpu/req %v\n", proto, shape.Label(), c, cl.proxy, cl.result, perRequest(cl.cpu, cl.result.Requests))
				}
				res.cells = append(res.cells, cells...)
			}
		}
	}
	if res.handshakes, err = measureHandshakes(ctx, o, s); err != nil {
		return nil, err
	}
	if o.edgeProfile != "" {
		if err := profileEdge(ctx, o, s, progress); err != nil {
			return nil, fmt.Errorf("profiling knit's edge: %w", err)
		}
	}
	for _, h := range res.handshakes {
		fmt.Fprintf(progress, "edge TLS handshake + first byte %-12s p50 %v p99 %v (%d, %d errors) cpu/conn %v\n", h.proxy, h.p50, h.p99, h.n, h.errs, perRequest(h.cpu, h.n))
	}
	res.elapsed = time.Since(began)
	return res, nil
}

// buildEdge builds knit-queue and edgeproxy as make images builds
// binaries, into dir.
func buildEdge(ctx context.Context, root, dir string) (knitQueue, edgeProxy string, err error) {
	cmd := goCmd(ctx, root, "build", "-trimpath", "-ldflags", "-s -w", "-o", dir+string(filepath.Separator), "./cmd/knit-queue", "./hack/bench/edgeproxy")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go build ./cmd/knit-queue ./hack/bench/edgeproxy: %v\n%s", err, out)
	}
	return filepath.Join(dir, "knit-queue"), filepath.Join(dir, "edgeproxy"), nil
}

// startEdge starts the app in this process, a knit-queue (cc=0) in front
// of it, and the edge proxies in front of that: knit's ingress with its
// fast path and without, and nginx if it is installed.
func startEdge(ctx context.Context, dir, knitQueue, edgeProxyBin string) (*edgeSetup, *edgeResult, error) {
	s := &edgeSetup{}
	res := &edgeResult{labels: map[string]string{}}
	fail := func(err error) (*edgeSetup, *edgeResult, error) {
		s.close()
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	s.app = &http.Server{Handler: queuebench.App(), ReadHeaderTimeout: 10 * time.Second}
	go s.app.Serve(ln)
	_, appPort, _ := net.SplitHostPort(ln.Addr().String())
	env, queueAddr, err := queueEnv(appPort, 0)
	if err != nil {
		return fail(err)
	}
	s.queue = &proxyProc{path: path{name: "edge-queue", label: "knit-queue", url: "http://" + queueAddr}, cmd: execCommand(knitQueue, env),
		bin: knitQueue, probe: http.Header{"K-Network-Probe": {"queue"}}}
	if err := s.queue.start(ctx, dir); err != nil {
		s.queue = nil
		return fail(err)
	}
	certFile, keyFile, err := writeEdgeCert(dir)
	if err != nil {
		return fail(err)
	}
	for _, k := range []struct {
		name, label string
		extra       []string
	}{{edgeKnit, "knit ingress", nil}, {edgeKnitNoFast, "knit ingress, fast path off", []string{"-no-fast-path"}}} {
		p, err := startKnitEdge(ctx, dir, edgeProxyBin, queueAddr, certFile, keyFile, k.name, k.label, k.extra)
		if err != nil {
			return fail(err)
		}
		s.proxies = append(s.proxies, p)
		res.proxies = append(res.proxies, k.name)
		res.labels[k.name] = k.label
	}
	p, why, err := startNginx(ctx, dir, queueAddr, certFile, keyFile)
	switch {
	case err != nil:
		return fail(err)
	case why != "":
		res.nginxSkip = why
	default:
		s.proxies = append(s.proxies, p)
		res.proxies = append(res.proxies, edgeNginx)
		res.nginx = p.label
		res.labels[edgeNginx] = p.label
	}
	return s, res, nil
}

// startKnitEdge starts one edgeproxy process in front of upstream.
func startKnitEdge(ctx context.Context, dir, bin, upstream, cert, key, name, label string, extra []string) (*edgeProxy, error) {
	addrs, err := freeAddrs(3)
	if err != nil {
		return nil, err
	}
	args := append([]string{"-listen", addrs[0], "-listen-tls", addrs[1], "-upstream", upstream, "-host", edgeHost, "-cert", cert, "-key", key,
		"-pprof", addrs[2]}, extra...)
	cmd := execCommand(bin, nil)
	cmd.Args = append(cmd.Args, args...)
	proc := &proxyProc{path: path{name: name, label: label, url: "http://" + addrs[0] + "/", host: edgeHost, proc: true}, cmd: cmd, bin: bin}
	if err := proc.start(ctx, dir); err != nil {
		return nil, err
	}
	return &edgeProxy{name: name, label: label, proc: proc, tlsAddr: addrs[1], pprof: addrs[2], pids: []int{cmd.Process.Pid}}, nil
}

// startNginx starts nginx in front of upstream; why says why it did not.
func startNginx(ctx context.Context, dir, upstream, cert, key string) (p *edgeProxy, why string, err error) {
	addrs, err := freeAddrs(2)
	if err != nil {
		return nil, "", err
	}
	ndir := filepath.Join(dir, "nginx")
	if err := os.MkdirAll(ndir, 0o755); err != nil {
		return nil, "", err
	}
	cmd, why := nginxCommand(nginxSettings{Dir: ndir, Upstream: upstream, Listen: addrs[0], ListenTLS: addrs[1], Cert: cert, Key: key, Host: edgeHost})
	if why != "" {
		return nil, why, nil
	}
	label := nginxVersion(cmd)
	proc := &proxyProc{path: path{name: edgeNginx, label: label, url: "http://" + addrs[0] + "/", host: edgeHost, proc: true}, cmd: cmd, bin: cmd.Path}
	p = &edgeProxy{name: edgeNginx, label: label, proc: proc, tlsAddr: addrs[1]}
	if err := proc.start(ctx, dir); err != nil {
		p.stop()
		return nil, "", err
	}
	p.pids = append([]int{cmd.Process.Pid}, childPIDs(cmd.Process.Pid)...)
	if len(p.pids) < 2 {
		p.stop()
		return nil, "", errors.New("nginx: no worker processes")
	}
	return p, "", nil
}

// freeAddrs are n free loopback addresses.
func freeAddrs(n int) ([]string, error) {
	out := make([]string, n)
	for i := range out {
		a, err := freeAddr()
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

// cpuMeter adds the CPU time p's processes spend during a measured run
// to *total.
func (p *edgeProxy) cpuMeter(total *time.Duration) func(start bool) {
	var before time.Duration
	var ok bool
	read := func() (time.Duration, error) {
		var sum time.Duration
		for _, pid := range p.pids {
			t, err := readCPU(pid)
			if err != nil {
				return 0, err
			}
			sum += t
		}
		return sum, nil
	}
	return func(start bool) {
		now, err := read()
		switch {
		case start:
			before, ok = now, err == nil
		case ok && err == nil:
			*total += now - before
		}
	}
}

// edgeTLS is the client's TLS: X25519 only, no session resumption, the
// bench's own certificate taken as it is, ALPN as proto wants.
func edgeTLS(proto edgeProtocol) *tls.Config {
	cfg := &tls.Config{ServerName: edgeHost, InsecureSkipVerify: true, CurvePreferences: []tls.CurveID{tls.X25519}}
	if proto == edgeH1TLS {
		cfg.NextProtos = []string{"http/1.1"}
	}
	return cfg
}

// measureEdgeCells loads every proxy with one protocol, shape and
// concurrency, the proxies taking turns slice by slice.
func measureEdgeCells(ctx context.Context, o options, s *edgeSetup, proto edgeProtocol, shape queuebench.Shape, c int) ([]edgeCell, error) {
	runs := make([][]queuebench.Result, len(s.proxies))
	cpu := make([]time.Duration, len(s.proxies))
	for range o.slices {
		for i, p := range s.proxies {
			spec := queuebench.LoadSpec{
				URL: p.proc.path.url, Host: edgeHost, Shape: shape, Concurrency: c,
				Duration: o.edgeDuration / time.Duration(o.slices), MaxRequests: o.maxRequests / o.slices, Warmup: o.warmup,
				Measure: p.cpuMeter(&cpu[i]),
			}
			if proto != edgeH1 {
				spec.URL = "http://" + p.tlsAddr + "/"
				spec.TLS, spec.HTTP2 = edgeTLS(proto), proto == edgeH2TLS
			}
			r, err := queuebench.Run(ctx, spec)
			if err != nil {
				return nil, fmt.Errorf("edge %s, %s, %s: %w", p.label, proto, shape.Label(), err)
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			runs[i] = append(runs[i], r)
		}
	}
	cells := make([]edgeCell, len(s.proxies))
	for i, p := range s.proxies {
		cells[i] = edgeCell{proto: proto, shape: shape, c: c, proxy: p.name, result: queuebench.Merge(runs[i]), cpu: cpu[i]}
	}
	return cells, nil
}

// perRequest is d shared by n requests.
func perRequest(d time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return d / time.Duration(n)
}
