package main

import (
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
)

// procSpecs are the process paths. knit-queue and Knative's queue-proxy
// get the same environment, Knative's contract for a revision's
// queue-proxy (which knit-queue reads too).
func procSpecs(bareProxy, knitQueue, knativeQueue, appURL string) ([]*proxyProc, error) {
	_, appPort, err := net.SplitHostPort(strings.TrimPrefix(appURL, "http://"))
	if err != nil {
		return nil, fmt.Errorf("app URL %q: %w", appURL, err)
	}
	queueProbe := http.Header{"K-Network-Probe": {"queue"}}
	bareAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	procs := []*proxyProc{{
		path: path{name: pathProcBare, label: labels[pathProcBare], url: "http://" + bareAddr, proc: true},
		cmd:  exec.Command(bareProxy, "-listen", bareAddr, "-upstream", appURL),
		bin:  bareProxy,
	}}
	for _, q := range []struct {
		name, bin, kind string
		cc              int
		extraEnv        []string
	}{
		{pathProcKnitCC0, knitQueue, "knit", 0, nil},
		{pathProcKnitCC0NoFast, knitQueue, "knit", 0, []string{"QUEUE_DISABLE_FAST_PATH=true"}},
		{pathProcKnativeCC0, knativeQueue, "knative", 0, nil},
		{pathProcKnitCC10, knitQueue, "knit", 10, nil},
		{pathProcKnativeCC10, knativeQueue, "knative", 10, nil},
	} {
		if q.bin == "" {
			continue
		}
		env, addr, err := queueEnv(appPort, q.cc)
		if err != nil {
			return nil, err
		}
		cmd := execCommand(q.bin, append(env, q.extraEnv...))
		pa := path{name: q.name, label: labels[q.name], url: "http://" + addr, proc: true, cc: q.cc}
		if q.kind == "knit" && knativeQueue != "" {
			pa.peer = map[int]string{0: pathProcKnativeCC0, 10: pathProcKnativeCC10}[q.cc]
		}
		procs = append(procs, &proxyProc{path: pa, cmd: cmd, bin: q.bin, probe: queueProbe})
	}
	return procs, nil
}

// queueEnv is the environment Knative's revision reconciler gives a
// queue-proxy with Knative's default config maps (config-observability:
// Prometheus request metrics, no request log, no tracing, no profiling;
// config-logging's zap config at info), the Revision's defaults
// (timeoutSeconds 300) plus a response-start and an idle timeout so all
// three timeouts are armed, and the TCP readiness probe Knative defaults
// for the user container; the pod's names are made up. QUEUE_LISTEN_HOST,
// QUEUE_ADMIN_PORT and QUEUE_METRICS_PORT are knit's knobs for what
// hack/knative/loopback/servers.go fixes in Knative's build: loopback
// only, free admin and metrics ports. It returns the serving address.
func queueEnv(appPort string, cc int) ([]string, string, error) {
	var ports [2]string
	for i := range ports {
		addr, err := freeAddr()
		if err != nil {
			return nil, "", err
		}
		_, ports[i], _ = net.SplitHostPort(addr)
	}
	env := []string{
		"SERVING_NAMESPACE=bench",
		"SERVING_SERVICE=app",
		"SERVING_CONFIGURATION=app",
		"SERVING_REVISION=app-00001",
		"SERVING_POD=app-00001-deployment-5d8f9c7b6-bench",
		"SERVING_POD_IP=127.0.0.1",
		"QUEUE_SERVING_PORT=" + ports[0],
		"QUEUE_SERVING_TLS_PORT=" + ports[1], // no certificate mounted: never listened on
		"USER_PORT=" + appPort,
		"CONTAINER_CONCURRENCY=" + strconv.Itoa(cc),
		"REVISION_TIMEOUT_SECONDS=300",
		"REVISION_RESPONSE_START_TIMEOUT_SECONDS=60",
		"REVISION_IDLE_TIMEOUT_SECONDS=60",
		`SERVING_READINESS_PROBE={"tcpSocket":{"port":` + appPort + `,"host":"127.0.0.1"},"successThreshold":1}`,
		"SERVING_LOGGING_CONFIG=" + knativeZapConfig,
		"SERVING_LOGGING_LEVEL=info",
		"SERVING_REQUEST_LOG_TEMPLATE=",
		"SERVING_ENABLE_REQUEST_LOG=false",
		"SERVING_ENABLE_PROBE_REQUEST_LOG=false",
		"SERVING_REQUEST_METRICS_BACKEND=prometheus",
		"SERVING_REQUEST_METRICS_REPORTING_PERIOD_SECONDS=5",
		"METRICS_DOMAIN=knative.dev/internal/serving",
		"METRICS_COLLECTOR_ADDRESS=",
		"METRICS_PROMETHEUS_HOST=127.0.0.1", // Knative's request-metrics exporter, port 9091
		"SYSTEM_NAMESPACE=knative-serving",
		"TRACING_CONFIG_BACKEND=none",
		"TRACING_CONFIG_ZIPKIN_ENDPOINT=",
		"TRACING_CONFIG_DEBUG=false",
		"TRACING_CONFIG_SAMPLE_RATE=0.1",
		"ENABLE_PROFILING=false",
		"ENABLE_HTTP2_AUTO_DETECTION=false",
		"ENABLE_HTTP_FULL_DUPLEX=false",
		"ENABLE_MULTI_CONTAINER_PROBES=false",
		"HOST_IP=127.0.0.1",
		"ROOT_CA=",
		"QUEUE_LISTEN_HOST=127.0.0.1",
		"QUEUE_ADMIN_PORT=0",
		"QUEUE_METRICS_PORT=0",
	}
	return env, net.JoinHostPort("127.0.0.1", ports[0]), nil
}

// execCommand runs bin with exactly env.
func execCommand(bin string, env []string) *exec.Cmd {
	cmd := exec.Command(bin)
	cmd.Env = env
	return cmd
}

// knativeZapConfig is config-logging's zap-logger-config as Knative
// ships it.
const knativeZapConfig = `{"level": "info", "development": false, "outputPaths": ["stdout"], "errorOutputPaths": ["stderr"], "encoding": "json",` +
	` "encoderConfig": {"timeKey": "timestamp", "levelKey": "severity", "nameKey": "logger", "callerKey": "caller", "messageKey": "message",` +
	` "stacktraceKey": "stacktrace", "lineEnding": "", "levelEncoder": "", "timeEncoder": "iso8601", "durationEncoder": "", "callerEncoder": ""}}`
