package probes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/knitops/knit/dataplane/grpchealth/grpchealthtest"
)

// portMap maps declared ports to the ports that listen, as the runtime's
// does: Target.Port.
type portMap struct {
	byNumber map[int32]int32
	byName   map[string]int32
}

func (m portMap) resolve(p intstr.IntOrString) (int32, bool) {
	if p.Type == intstr.String {
		local, ok := m.byName[p.StrVal]
		return local, ok
	}
	if local, ok := m.byNumber[p.IntVal]; ok {
		return local, true
	}
	return p.IntVal, p.IntVal != 0
}

// serverPorts maps declared port 8012 (named http) to a test server's port.
func serverPorts(t *testing.T, addr string) portMap {
	t.Helper()
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	return portMap{byNumber: map[int32]int32{8012: int32(port)}, byName: map[string]int32{"http": int32(port)}}
}

// target is c on loopback with ports, exec commands run by exec.
func target(c *corev1.Container, ports portMap, exec func(context.Context, []string) error) Target {
	return Target{Container: c, IP: "127.0.0.1", Port: ports.resolve, Exec: exec}
}

// fakeExec stands in for the runtime's exec: `sh -c "exit 0"` passes,
// `sh -c "echo not yet; exit 3"` fails as the runtime says so.
func fakeExec(_ context.Context, argv []string) error {
	switch strings.Join(argv, " ") {
	case "sh -c exit 0":
		return nil
	case "sh -c echo not yet; exit 3":
		return errors.New("exit status 3: not yet")
	}
	return fmt.Errorf("unexpected command %q", argv)
}

func TestProbeChecks(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("K-Network-Probe") != "queue":
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.Host != "probe.local":
			w.WriteHeader(http.StatusBadRequest)
		case r.URL.Path == "/moved":
			http.Redirect(w, r, "http://elsewhere.invalid/", http.StatusFound)
		}
	}))
	defer srv.Close()
	ports := serverPorts(t, srv.Listener.Addr().String())
	grpcApp := grpchealthtest.Start(t, map[string]string{"": "SERVING", "warming": "NOT_SERVING"})
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := int32(closed.Addr().(*net.TCPAddr).Port)
	closed.Close()
	ports.byNumber[9000], ports.byName["grpc"] = int32(grpcApp.Port()), int32(grpcApp.Port())
	c := &corev1.Container{Name: "queue-proxy", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8012}, {Name: "grpc", ContainerPort: 9000}}}
	headers := []corev1.HTTPHeader{{Name: "K-Network-Probe", Value: "queue"}, {Name: "Host", Value: "probe.local"}}

	for _, tc := range []struct {
		name    string
		handler corev1.ProbeHandler
		wantErr string
	}{
		{"http by number with headers", corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8012), HTTPHeaders: headers}}, ""},
		{"http by name", corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("http"), HTTPHeaders: headers}}, ""},
		{"http port 0 is the container's port", corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{HTTPHeaders: headers}}, ""},
		{"a redirect is a success", corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/moved", Port: intstr.FromInt32(8012), HTTPHeaders: headers}}, ""},
		{"http status", corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8012)}}, "HTTP probe failed with statuscode: 503"},
		{"unknown port name", corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("metrics")}}, "probe port metrics is not a port of container queue-proxy"},
		{"tcp", corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}, ""},
		// How an exec command runs is the runtime's (its TestExecProbe);
		// the prober hands it the command and takes its answer.
		{"exec", corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "exit 0"}}}, ""},
		{"exec failing", corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "echo not yet; exit 3"}}}, "exit status 3: not yet"},
		{"grpc serving", corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000}}, ""},
		{"grpc service not serving", corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000, Service: ptr.To("warming")}}, `service "warming" is NOT_SERVING`},
		{"grpc probe of an HTTP/1 port", corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 8012}}, "gRPC health check of 127.0.0.1:"},
		{"grpc port nothing listens on", corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: closedPort}}, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(&corev1.Probe{ProbeHandler: tc.handler}, target(c, ports, fakeExec))
			err := p.Check(context.Background(), time.Second)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("check = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestProbeRun follows readiness through a probe's life: not ready until
// the first success (probed every 50ms, not every period), unready after
// failureThreshold failures, reported as failing.
func TestProbeRun(t *testing.T) {
	healthy := make(chan bool, 1)
	healthy <- false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok := <-healthy
		healthy <- ok
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	set := func(ok bool) { <-healthy; healthy <- ok }

	c := &corev1.Container{Name: "user-container", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8012}}}
	probe := &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8012)}},
		PeriodSeconds: 1, FailureThreshold: 2,
	}
	type report struct {
		ready   bool
		failing string
	}
	reports := make(chan report, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go New(probe, target(c, serverPorts(t, srv.Listener.Addr().String()), nil)).Readiness(ctx, time.Now(), func(ready bool, failing string) {
		reports <- report{ready, failing}
	})
	next := func(within time.Duration) report {
		t.Helper()
		select {
		case r := <-reports:
			return r
		case <-time.After(within):
			t.Fatalf("no readiness report within %s", within)
			return report{}
		}
	}

	if r := next(5 * time.Second); r.ready || !strings.Contains(r.failing, "user-container readiness probe failed: HTTP probe failed with statuscode: 503") {
		t.Fatalf("first report = %+v, want failing after failureThreshold×period", r)
	}
	set(true)
	if r := next(time.Second); !r.ready { // the 50ms startup interval, well within the 1s period
		t.Fatalf("report = %+v, want ready", r)
	}
	set(false)
	if r := next(5 * time.Second); r.ready || r.failing == "" {
		t.Fatalf("report = %+v, want unready and failing", r)
	}
}

func TestStartupInterval(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		since time.Duration
		want  time.Duration
	}{
		{"just started: as fast as loopback allows", 0, fastProbeInterval},
		{"within the first second", 999 * time.Millisecond, fastProbeInterval},
		{"a slow starter: back to the startup interval", time.Second, startupProbeInterval},
		{"long after", time.Minute, startupProbeInterval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := startupInterval(start, start.Add(tt.since)); got != tt.want {
				t.Errorf("startupInterval after %s = %s, want %s", tt.since, got, tt.want)
			}
		})
	}
}

// Only the probe the kubelet would answer at once (the queue-proxy's,
// which holds its answer until the app is ready) runs fast until it first
// passes; an exec probe keeps its period from the start, as the kubelet
// runs it (10s when the Revision said 0: the API server's default).
func TestReadinessInterval(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	httpGet := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{}}, PeriodSeconds: 1}
	execAt := func(period int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/ko-app/readiness", "probe"}}}, PeriodSeconds: period}
	}
	tests := []struct {
		name      string
		probe     *corev1.Probe
		everReady bool
		want      time.Duration
	}{
		{"http until it first passes: fast", httpGet, false, fastProbeInterval},
		{"http once it passed: its period", httpGet, true, time.Second},
		{"exec at period 1: every second from the start", execAt(1), false, time.Second},
		{"exec at the defaulted period 10: every 10s, no aggressive probing", execAt(10), false, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readinessInterval(tt.probe, settingsOf(tt.probe), tt.everReady, start, start); got != tt.want {
				t.Errorf("readinessInterval = %s, want %s", got, tt.want)
			}
		})
	}
}
