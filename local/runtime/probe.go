package runtime

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/knitops/knit/dataplane/grpchealth"
)

// How often a probe runs until it first succeeds: every fastProbeInterval
// for the container's first fastProbeFor, then every startupProbeInterval.
// Knative probes this aggressively so a replica serves as soon as it can
// (on loopback a failed dial costs microseconds); after the first success
// the probe's periodSeconds applies.
const (
	fastProbeInterval    = 5 * time.Millisecond
	fastProbeFor         = time.Second
	startupProbeInterval = 50 * time.Millisecond
)

// startupInterval is the wait before the next probe of a container that
// has not been ready yet and started at started.
func startupInterval(started, now time.Time) time.Duration {
	if now.Sub(started) < fastProbeFor {
		return fastProbeInterval
	}
	return startupProbeInterval
}

// prober runs one container's readiness probe against one replica: HTTP
// and TCP probes from this machine to the replica's address, as the
// kubelet probes a pod's IP, and exec probes inside its network.
type prober struct {
	probe     *corev1.Probe
	container *corev1.Container
	net       *podNetwork
	ports     portMap
	env       []string // for exec probes
	dir       string
	http      *http.Client
	// argv0 resolves an exec command's first word (koAppArgv0); nil
	// leaves it as written.
	argv0 func(ctx context.Context, name string) (string, error)
	// cred is the user exec commands run as (the container's); nil:
	// knit dev's.
	cred *syscall.Credential
	// inside is the container process whose mount and UTS namespaces and
	// root exec commands run in (enterView); 0: knit dev's.
	inside int
	// limits are the container's privileges (mountPlan.limits), which an
	// exec command in its view is held to as well.
	limits *privileges
	// wrapExec, when set, is the argv that runs an exec command inside
	// the container (runc exec), which then needs nothing else here.
	wrapExec func([]string) []string
}

func newProber(probe *corev1.Probe, c *corev1.Container, net *podNetwork, ports portMap, env []string, dir string) *prober {
	if net == nil {
		net = sharedNetwork
	}
	return &prober{probe: probe, container: c, net: net, ports: ports, env: env, dir: dir, http: &http.Client{
		// Like the kubelet: a fresh connection per probe, redirects are a
		// success, certificates are not checked.
		Transport:     &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// grpcProbes is the transport of every gRPC probe: cleartext HTTP/2, a
// fresh connection per probe as the kubelet's.
var grpcProbes = func() *http.Transport {
	t := grpchealth.NewTransport()
	t.DisableKeepAlives = true
	return t
}()

// probeSettings are the probe's numbers with Kubernetes' defaults.
type probeSettings struct {
	initialDelay, period, timeout      time.Duration
	successThreshold, failureThreshold int32
}

func settingsOf(p *corev1.Probe) probeSettings {
	orDefault := func(v, d int32) int32 {
		if v <= 0 {
			return d
		}
		return v
	}
	return probeSettings{
		initialDelay:     time.Duration(p.InitialDelaySeconds) * time.Second,
		period:           time.Duration(orDefault(p.PeriodSeconds, 10)) * time.Second,
		timeout:          time.Duration(orDefault(p.TimeoutSeconds, 1)) * time.Second,
		successThreshold: orDefault(p.SuccessThreshold, 1),
		failureThreshold: orDefault(p.FailureThreshold, 3),
	}
}

// failingAfter is how long a probe that never succeeded may fail before
// the container is reported as failing its probe.
func (s probeSettings) failingAfter() time.Duration {
	return s.initialDelay + s.period*time.Duration(s.failureThreshold)
}

// run probes until ctx ends. report is called when readiness changes and
// when the probe has failed long enough to be a failure worth reporting
// (failing is then the message; "" otherwise).
func (p *prober) run(ctx context.Context, started time.Time, report func(ready bool, failing string)) {
	s := settingsOf(p.probe)
	if !sleepCtx(ctx, s.initialDelay) {
		return
	}
	var ready, everReady, reported bool
	var successes, failures int32
	for {
		err := p.check(ctx, s.timeout)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			successes, failures = successes+1, 0
			if !ready && (!everReady || successes >= s.successThreshold) {
				ready, everReady, reported = true, true, false
				report(true, "")
			}
		} else {
			successes, failures = 0, failures+1
			if ready && failures >= s.failureThreshold {
				ready, reported = false, true
				report(false, p.message(err))
			} else if !everReady && !reported && time.Since(started) >= s.failingAfter() {
				reported = true
				report(false, p.message(err))
			}
		}
		if !sleepCtx(ctx, readinessInterval(p.probe, s, everReady, started, time.Now())) {
			return
		}
	}
}

// readinessInterval is the wait before a readiness probe's next run. Until
// it first succeeds, an HTTP or TCP probe runs every startupInterval: in
// knit that is the queue-proxy's probe of the pod (or a sidecar's), which
// the kubelet would run once at start and the queue-proxy answer as soon
// as the app is ready — Knative's aggressive probing for periodSeconds 0
// is the queue-proxy's, of the app, not the kubelet's. An exec probe (the
// app's own, left to the kubelet) keeps its periodSeconds throughout, as
// the kubelet runs it: 10s when the Revision said 0, the API server's
// default, so each run costs a fork on its period only.
func readinessInterval(probe *corev1.Probe, s probeSettings, everReady bool, started, now time.Time) time.Duration {
	if everReady || probe.Exec != nil {
		return s.period
	}
	return startupInterval(started, now)
}

func (p *prober) message(err error) string {
	return fmt.Sprintf("container %s readiness probe failed: %v", p.container.Name, err)
}

// check runs the probe once.
func (p *prober) check(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h := p.probe.ProbeHandler
	switch {
	case h.HTTPGet != nil:
		return p.checkHTTP(ctx, h.HTTPGet)
	case h.TCPSocket != nil:
		port, err := p.port(h.TCPSocket.Port)
		if err != nil {
			return err
		}
		host := h.TCPSocket.Host
		if host == "" {
			host = p.net.ip
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(int(port))))
		if err != nil {
			return err
		}
		return conn.Close()
	case h.Exec != nil:
		return p.checkExec(ctx, h.Exec.Command)
	case h.GRPC != nil:
		port, err := p.port(intstr.FromInt32(h.GRPC.Port))
		if err != nil {
			return err
		}
		return grpchealth.Check(ctx, grpcProbes, net.JoinHostPort(p.net.ip, strconv.Itoa(int(port))), ptr.Deref(h.GRPC.Service, ""))
	}
	return nil // a probe with no handler, which admission refuses
}

func (p *prober) checkHTTP(ctx context.Context, get *corev1.HTTPGetAction) error {
	port, err := p.port(get.Port)
	if err != nil {
		return err
	}
	host, scheme := get.Host, strings.ToLower(string(get.Scheme))
	if host == "" {
		host = p.net.ip
	}
	if scheme == "" {
		scheme = "http"
	}
	path := get.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+net.JoinHostPort(host, strconv.Itoa(int(port)))+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "kube-probe/knit")
	for _, h := range get.HTTPHeaders {
		if strings.EqualFold(h.Name, "Host") {
			req.Host = h.Value
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		// The body often says why (the queue-proxy's does); keep its start.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxProbeBody))
		if msg := strings.TrimSpace(string(body)); msg != "" {
			return fmt.Errorf("HTTP probe failed with statuscode: %d: %s", resp.StatusCode, msg)
		}
		return fmt.Errorf("HTTP probe failed with statuscode: %d", resp.StatusCode)
	}
	return nil
}

// maxProbeBody bounds how much of a failed HTTP probe's answer is kept
// for the condition message.
const maxProbeBody = 256

func (p *prober) checkExec(ctx context.Context, argv []string) error {
	if len(argv) == 0 {
		return fmt.Errorf("exec probe has no command")
	}
	if p.wrapExec != nil {
		argv = p.wrapExec(argv)
	}
	name := argv[0]
	if p.argv0 != nil && p.wrapExec == nil {
		var err error
		if name, err = p.argv0(ctx, name); err != nil {
			return err
		}
	}
	path, err := lookPath(name, p.env, p.dir)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env, cmd.Dir, cmd.SysProcAttr = p.env, p.dir, execAttr(p.cred)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	var enter func() (bool, error)
	if pid := p.inside; pid != 0 {
		limits := p.limits
		enter = func() (bool, error) {
			stuck, err := enterView(pid)
			if err == nil && limits != nil {
				err = limits.apply(true) // its root may be a mirror of /: no chroot either
			}
			return stuck, err
		}
	}
	if err := p.net.runAfter(cmd, enter); err != nil {
		if msg := strings.TrimSpace(out.String()); msg != "" {
			return fmt.Errorf("%w: %s", err, firstLine(msg))
		}
		return err
	}
	return nil
}

// port resolves a probe's port: a name is looked up in the probed
// container first, as the kubelet does; 0 is the container's first port.
func (p *prober) port(ref intstr.IntOrString) (int32, error) {
	if ref.Type == intstr.String {
		for _, cp := range p.container.Ports {
			if cp.Name == ref.StrVal {
				ref = intstr.FromInt32(cp.ContainerPort)
				break
			}
		}
	} else if ref.IntVal == 0 && len(p.container.Ports) > 0 {
		ref = intstr.FromInt32(p.container.Ports[0].ContainerPort)
	}
	port, ok := p.ports.resolve(ref)
	if !ok {
		return 0, fmt.Errorf("probe port %s is not a port of container %s", ref.String(), p.container.Name)
	}
	return port, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// sleepCtx waits d or until ctx ends; it reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
