package probes

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
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

// Target is what a Prober probes: one container of one replica, as the
// runtime that placed it knows it.
type Target struct {
	// Container is the probed container: its name says whose probe
	// failed, and its ports resolve a probe's named port and port 0.
	Container *corev1.Container
	// IP is the address HTTP, TCP and gRPC probes dial when the probe
	// names no host: the replica's, as the kubelet probes a pod's IP.
	IP string
	// Port maps a port the pod declares (a number or a name) to the port
	// that listens at IP, false when the pod declares no such port. nil
	// takes every number as it is.
	Port func(intstr.IntOrString) (int32, bool)
	// Exec runs an exec probe's command inside the container and waits
	// for it; its error says why the command failed. Where and as whom
	// it runs is the runtime's to say. nil fails every exec probe.
	Exec func(ctx context.Context, argv []string) error
}

// A Prober runs one container's probe against a Target: HTTP and TCP
// probes from this machine to the target's address, exec probes through
// Target.Exec.
type Prober struct {
	probe  *corev1.Probe
	target Target
	http   *http.Client
}

// New is a Prober of probe against t. probe may be nil for a Prober used
// only for a lifecycle hook's HTTPGet.
func New(probe *corev1.Probe, t Target) *Prober {
	return &Prober{probe: probe, target: t, http: &http.Client{
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

// settings are the probe's numbers with Kubernetes' defaults.
type settings struct {
	initialDelay, period, timeout      time.Duration
	successThreshold, failureThreshold int32
}

func settingsOf(p *corev1.Probe) settings {
	orDefault := func(v, d int32) int32 {
		if v <= 0 {
			return d
		}
		return v
	}
	return settings{
		initialDelay:     time.Duration(p.InitialDelaySeconds) * time.Second,
		period:           time.Duration(orDefault(p.PeriodSeconds, 10)) * time.Second,
		timeout:          time.Duration(orDefault(p.TimeoutSeconds, 1)) * time.Second,
		successThreshold: orDefault(p.SuccessThreshold, 1),
		failureThreshold: orDefault(p.FailureThreshold, 3),
	}
}

// failingAfter is how long a probe that never succeeded may fail before
// the container is reported as failing its probe.
func (s settings) failingAfter() time.Duration {
	return s.initialDelay + s.period*time.Duration(s.failureThreshold)
}

// Readiness probes until ctx ends, as a readiness probe of a container
// that started at started. report is called when readiness changes and
// when the probe has failed long enough to be a failure worth reporting
// (failing is then the message; "" otherwise).
func (p *Prober) Readiness(ctx context.Context, started time.Time, report func(ready bool, failing string)) {
	s := settingsOf(p.probe)
	if !sleepCtx(ctx, s.initialDelay) {
		return
	}
	var ready, everReady, reported bool
	var successes, failures int32
	for {
		err := p.Check(ctx, s.timeout)
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
func readinessInterval(probe *corev1.Probe, s settings, everReady bool, started, now time.Time) time.Duration {
	if everReady || probe.Exec != nil {
		return s.period
	}
	return startupInterval(started, now)
}

func (p *Prober) message(err error) string {
	return fmt.Sprintf("container %s readiness probe failed: %v", p.target.Container.Name, err)
}

// Check runs the probe once, within timeout.
func (p *Prober) Check(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h := p.probe.ProbeHandler
	switch {
	case h.HTTPGet != nil:
		return p.HTTPGet(ctx, h.HTTPGet)
	case h.TCPSocket != nil:
		port, err := p.port(h.TCPSocket.Port)
		if err != nil {
			return err
		}
		host := h.TCPSocket.Host
		if host == "" {
			host = p.target.IP
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(int(port))))
		if err != nil {
			return err
		}
		return conn.Close()
	case h.Exec != nil:
		if p.target.Exec == nil {
			return errors.New("exec probes are not supported here")
		}
		return p.target.Exec(ctx, h.Exec.Command)
	case h.GRPC != nil:
		port, err := p.port(intstr.FromInt32(h.GRPC.Port))
		if err != nil {
			return err
		}
		return grpchealth.Check(ctx, grpcProbes, net.JoinHostPort(p.target.IP, strconv.Itoa(int(port))), ptr.Deref(h.GRPC.Service, ""))
	}
	return nil // a probe with no handler, which admission refuses
}

// HTTPGet runs an httpGet action against the target as the kubelet does,
// for a probe or a lifecycle hook: a status from 200 to 399 is a success;
// another fails with the start of the answer's body, which often says why
// (the queue-proxy's does).
func (p *Prober) HTTPGet(ctx context.Context, get *corev1.HTTPGetAction) error {
	port, err := p.port(get.Port)
	if err != nil {
		return err
	}
	host, scheme := get.Host, strings.ToLower(string(get.Scheme))
	if host == "" {
		host = p.target.IP
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

// port resolves a probe's port: a name is looked up in the probed
// container first, as the kubelet does; 0 is the container's first port.
func (p *Prober) port(ref intstr.IntOrString) (int32, error) {
	c := p.target.Container
	if ref.Type == intstr.String {
		for _, cp := range c.Ports {
			if cp.Name == ref.StrVal {
				ref = intstr.FromInt32(cp.ContainerPort)
				break
			}
		}
	} else if ref.IntVal == 0 && len(c.Ports) > 0 {
		ref = intstr.FromInt32(c.Ports[0].ContainerPort)
	}
	resolve := p.target.Port
	if resolve == nil {
		resolve = asDeclared
	}
	port, ok := resolve(ref)
	if !ok {
		return 0, fmt.Errorf("probe port %s is not a port of container %s", ref.String(), c.Name)
	}
	return port, nil
}

// asDeclared is Target.Port for ports that listen where they are
// declared: a number is itself, a name (not the container's) is none.
func asDeclared(ref intstr.IntOrString) (int32, bool) {
	if ref.Type == intstr.String {
		return 0, false
	}
	return ref.IntVal, ref.IntVal != 0
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
