package queue

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigFromEnv(t *testing.T) {
	defaults := Config{
		ServingPort:      DefaultServingPort,
		AdminPort:        DefaultAdminPort,
		MetricsPort:      DefaultMetricsPort,
		UserPort:         DefaultUserPort,
		RevisionTimeout:  DefaultRevisionTimeout,
		DrainQuietPeriod: DefaultDrainQuietPeriod,
	}
	tests := []struct {
		name    string
		env     map[string]string
		want    func(c *Config)
		wantErr []string
	}{{
		name: "nothing set: Knative's defaults",
		env:  nil,
		want: func(*Config) {},
	}, {
		name: "a revision as Knative sets it",
		env: map[string]string{
			"QUEUE_SERVING_PORT":                      "8012",
			"USER_PORT":                               "8081",
			"CONTAINER_CONCURRENCY":                   "10",
			"REVISION_TIMEOUT_SECONDS":                "600",
			"REVISION_RESPONSE_START_TIMEOUT_SECONDS": "30",
			"REVISION_IDLE_TIMEOUT_SECONDS":           "60",
			"SERVING_READINESS_PROBE":                 `{"tcpSocket":{"port":8081,"host":"127.0.0.1"},"successThreshold":1}`,
			"SERVING_NAMESPACE":                       "default",
			"SERVING_SERVICE":                         "hello",
			"SERVING_CONFIGURATION":                   "hello",
			"SERVING_REVISION":                        "hello-abc1234",
			"SERVING_POD":                             "hello-abc1234-deployment-x",
			"SERVING_POD_IP":                          "10.0.0.7",
			"SERVING_ENABLE_REQUEST_LOG":              "true",
			"ENABLE_PROFILING":                        "false",
			"QUEUE_SERVING_TLS_PORT":                  "8112", // ignored
		},
		want: func(c *Config) {
			c.UserPort = 8081
			c.ContainerConcurrency = 10
			c.RevisionTimeout = 600 * time.Second
			c.ResponseStartTimeout = 30 * time.Second
			c.IdleTimeout = 60 * time.Second
			c.ReadinessProbe = `{"tcpSocket":{"port":8081,"host":"127.0.0.1"},"successThreshold":1}`
			c.Namespace, c.Service, c.Configuration = "default", "hello", "hello"
			c.Revision, c.Pod, c.PodIP = "hello-abc1234", "hello-abc1234-deployment-x", "10.0.0.7"
			c.EnableRequestLog = true
		},
	}, {
		name: "knit's local runtime",
		env: map[string]string{
			"QUEUE_LISTEN_HOST":                "127.0.0.1",
			"QUEUE_SERVING_PORT":               "40001",
			"QUEUE_ADMIN_PORT":                 "40002",
			"QUEUE_METRICS_PORT":               "40003",
			"USER_PORT":                        "40004",
			"USER_PORT_NAME":                   "h2c",
			"QUEUE_DRAIN_QUIET_PERIOD_SECONDS": "0",
		},
		want: func(c *Config) {
			c.ListenHost = "127.0.0.1"
			c.ServingPort, c.AdminPort, c.MetricsPort, c.UserPort = 40001, 40002, 40003, 40004
			c.UserProtocol = ProtocolH2C
			c.DrainQuietPeriod = 0
		},
	}, {
		name: "every malformed variable reported at once",
		env: map[string]string{
			"USER_PORT":                  "http",
			"CONTAINER_CONCURRENCY":      "ten",
			"REVISION_TIMEOUT_SECONDS":   "5m",
			"SERVING_ENABLE_REQUEST_LOG": "yes please",
		},
		wantErr: []string{
			`USER_PORT: "http" is not an integer`,
			`CONTAINER_CONCURRENCY: "ten" is not an integer`,
			`REVISION_TIMEOUT_SECONDS: "5m" is not an integer`,
			`SERVING_ENABLE_REQUEST_LOG: "yes please" is not a boolean`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConfigFromEnv(envOf(tt.env))
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("ConfigFromEnv() = nil error, want %q", tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("ConfigFromEnv() error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ConfigFromEnv() error: %v", err)
			}
			want := defaults
			tt.want(&want)
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Config{}, "Logger")); diff != "" {
				t.Errorf("ConfigFromEnv() (-want +got):\n%s", diff)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	valid, err := ConfigFromEnv(envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		mutate  func(c *Config)
		wantErr string // "" means valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"ephemeral listen ports", func(c *Config) { c.ServingPort, c.AdminPort, c.MetricsPort = 0, 0, 0 }, ""},
		{"user port missing", func(c *Config) { c.UserPort = 0 }, "USER_PORT: 0 is not a port"},
		{"serving port too big", func(c *Config) { c.ServingPort = 70000 }, "QUEUE_SERVING_PORT: 70000 is not a port"},
		{"serving port is the user port", func(c *Config) { c.ServingPort = c.UserPort }, "QUEUE_SERVING_PORT: port 8080 is already USER_PORT"},
		{"admin port is the metrics port", func(c *Config) { c.AdminPort = c.MetricsPort }, "QUEUE_METRICS_PORT: port 9091 is already QUEUE_ADMIN_PORT"},
		{"negative concurrency", func(c *Config) { c.ContainerConcurrency = -1 }, "CONTAINER_CONCURRENCY: -1 is negative"},
		{"negative timeout", func(c *Config) { c.IdleTimeout = -time.Second }, "REVISION_IDLE_TIMEOUT_SECONDS: -1s is negative"},
		{"response start beyond total", func(c *Config) { c.RevisionTimeout, c.ResponseStartTimeout = 10*time.Second, 20*time.Second }, "REVISION_RESPONSE_START_TIMEOUT_SECONDS: 20s is longer than REVISION_TIMEOUT_SECONDS 10s"},
		{"idle beyond total", func(c *Config) { c.RevisionTimeout, c.IdleTimeout = 10*time.Second, 20*time.Second }, "REVISION_IDLE_TIMEOUT_SECONDS: 20s is longer"},
		{"no total timeout allows any other", func(c *Config) { c.RevisionTimeout, c.IdleTimeout = 0, 20*time.Second }, ""},
		{"bad listen host", func(c *Config) { c.ListenHost = "example.com" }, `QUEUE_LISTEN_HOST: "example.com" is not an IP address`},
		{"unknown protocol", func(c *Config) { c.UserProtocol = "spdy" }, `user protocol "spdy"`},
		{"http1 protocol", func(c *Config) { c.UserProtocol = ProtocolHTTP1 }, ""},
		{"probe not JSON", func(c *Config) { c.ReadinessProbe = "tcp:8080" }, "SERVING_READINESS_PROBE: not a JSON probe"},
		{"probe unknown scheme", func(c *Config) { c.ReadinessProbe = `{"httpGet":{"scheme":"FTP"}}` }, `SERVING_READINESS_PROBE: probe 0: httpGet scheme "FTP"`},
		{"probe list", func(c *Config) {
			c.ReadinessProbe = `[{"tcpSocket":{"port":8080}},{"httpGet":{"path":"/ready","port":"http"}}]`
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid
			tt.mutate(&c)
			err := c.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("Validate() = nil, want %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("Validate() = %q, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestQueueDepth(t *testing.T) {
	for _, tt := range []struct{ cc, depth, want int }{
		{cc: 1, want: 100},
		{cc: 10, want: 100},
		{cc: 50, want: 500},
		{cc: 5, depth: 7, want: 7},
	} {
		c := Config{ContainerConcurrency: tt.cc, QueueDepth: tt.depth}
		if got := c.queueDepth(); got != tt.want {
			t.Errorf("Config{cc=%d, depth=%d}.queueDepth() = %d, want %d", tt.cc, tt.depth, got, tt.want)
		}
	}
}
