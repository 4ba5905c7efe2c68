package queue

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzConfigFromEnv reads any environment — Knative's queue-proxy
// variables with any values, one NAME=value a line — as the sidecar does
// at start. It never panics; a malformed variable is an error naming it;
// and a Config that validates is one the queue can run: every *_SECONDS
// is the number of seconds written (not an overflowed one), the readiness
// probes parse with positive periods, and the breaker holds exactly
// CONTAINER_CONCURRENCY slots. The three overflows it found (seconds and
// probe periods past time.Duration's range, a concurrency past the
// breaker's 32 bits) are refused by Validate now; their inputs stay seeds.
func FuzzConfigFromEnv(f *testing.F) {
	for _, env := range []string{
		"",
		"QUEUE_SERVING_PORT=8012\nUSER_PORT=8081\nCONTAINER_CONCURRENCY=10\nREVISION_TIMEOUT_SECONDS=600\nREVISION_RESPONSE_START_TIMEOUT_SECONDS=30\nREVISION_IDLE_TIMEOUT_SECONDS=60\n" +
			`SERVING_READINESS_PROBE={"tcpSocket":{"port":8081,"host":"127.0.0.1"},"successThreshold":1}` + "\nSERVING_ENABLE_REQUEST_LOG=true\n",
		`SERVING_READINESS_PROBE=[{"httpGet":{"path":"/ready","port":8080,"httpHeaders":[{"name":"K-Kubelet-Probe","value":"queue"}]},"periodSeconds":1},{"tcpSocket":{}}]`,
		`SERVING_READINESS_PROBE={"httpGet":{"scheme":"FTP"}}`,
		`SERVING_READINESS_PROBE={"periodSeconds":9223372037,"timeoutSeconds":-1}`,
		"REVISION_TIMEOUT_SECONDS=9223372037\n",
		"REVISION_TIMEOUT_SECONDS=18446744074\nREVISION_IDLE_TIMEOUT_SECONDS=1\n",
		// The three overflows the fuzzer found, refused since.
		"REVISION_TIMEOUT_SECONDS=18700000000\n",
		`SERVING_READINESS_PROBE={"periodSeconds":9223372037}`,
		"CONTAINER_CONCURRENCY=4294967296\n",
		"REVISION_TIMEOUT_SECONDS=27670116111\n",
		"CONTAINER_CONCURRENCY=-1\nUSER_PORT=0\nQUEUE_LISTEN_HOST=::1\nUSER_PORT_NAME=h2c\n",
		"QUEUE_SERVING_PORT=8080\nUSER_PORT=8080\nQUEUE_ADMIN_PORT=99999\nENABLE_PROFILING=maybe\n",
	} {
		f.Add(env)
	}
	f.Fuzz(func(t *testing.T, env string) {
		vars := map[string]string{}
		for line := range strings.Lines(env) {
			name, value, _ := strings.Cut(strings.TrimRight(line, "\n"), "=")
			vars[name] = value
		}
		cfg, err := ConfigFromEnv(func(name string) string { return vars[name] })
		if err != nil {
			return
		}
		if cfg.Validate() != nil {
			return
		}
		for name, d := range map[string]time.Duration{
			"REVISION_TIMEOUT_SECONDS":                cfg.RevisionTimeout,
			"REVISION_RESPONSE_START_TIMEOUT_SECONDS": cfg.ResponseStartTimeout,
			"REVISION_IDLE_TIMEOUT_SECONDS":           cfg.IdleTimeout,
			"QUEUE_DRAIN_QUIET_PERIOD_SECONDS":        cfg.DrainQuietPeriod,
		} {
			v, set := vars[name]
			if !set || v == "" {
				continue
			}
			n, _ := strconv.ParseInt(v, 10, 64)
			if d%time.Second != 0 || int64(d/time.Second) != n {
				t.Fatalf("%s=%s validated as %v", name, v, d)
			}
		}
		probes, err := parseProbes(cfg.ReadinessProbe, cfg.UserPort, cfg.AutodetectHTTP2)
		if err != nil {
			t.Fatalf("Validate took SERVING_READINESS_PROBE that does not parse: %v", err)
		}
		for i, p := range probes {
			if p.period <= 0 || p.successThreshold < 1 || p.failureThreshold < 1 {
				t.Fatalf("probe %d: period %v, thresholds %d/%d", i, p.period, p.successThreshold, p.failureThreshold)
			}
		}
		if depth := cfg.queueDepth(); depth < 1 {
			t.Fatalf("queue depth %d", depth)
		}
		if cfg.ContainerConcurrency > 0 {
			if b := NewBreaker(cfg.ContainerConcurrency, cfg.queueDepth()); b.Capacity() != cfg.ContainerConcurrency {
				t.Fatalf("CONTAINER_CONCURRENCY=%d gives a breaker of %d slots", cfg.ContainerConcurrency, b.Capacity())
			}
		}
	})
}
