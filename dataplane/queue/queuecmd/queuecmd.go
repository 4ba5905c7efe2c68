// Package queuecmd is the queue-proxy's command line, shared by `knit
// queue` and the lean knit-queue binary: flags over Knative's environment
// variables, logging, and the run until SIGTERM.
package queuecmd

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/knitops/knit/dataplane/queue"
)

// Run runs the queue-proxy until ctx ends (SIGTERM: drain, then return
// nil). It reads Knative's queue-proxy environment variables, so it drops
// into a Knative-shaped pod unchanged; flags override them for the local
// runtime and for trying it by hand. name is the command's name in usage
// and errors.
func Run(ctx context.Context, name string, args []string, stderr io.Writer) error {
	cfg, err := queue.ConfigFromEnv(os.Getenv)
	if err != nil {
		return fmt.Errorf("reading the environment: %w", err)
	}
	protocol := string(cfg.UserProtocol)
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.ServingPort, "port", cfg.ServingPort, "serving port the app's traffic enters on (QUEUE_SERVING_PORT)")
	fs.IntVar(&cfg.AdminPort, "admin-port", cfg.AdminPort, "port of /healthz and /wait-for-drain (QUEUE_ADMIN_PORT)")
	fs.IntVar(&cfg.MetricsPort, "metrics-port", cfg.MetricsPort, "port of /metrics and /stats (QUEUE_METRICS_PORT)")
	fs.StringVar(&cfg.ListenHost, "listen-host", cfg.ListenHost, "address the queue's ports bind to; empty for all (QUEUE_LISTEN_HOST)")
	fs.IntVar(&cfg.UserPort, "user-port", cfg.UserPort, "the app's port on 127.0.0.1 (USER_PORT)")
	fs.StringVar(&protocol, "user-protocol", protocol, "h2c or http1 to force how the queue speaks to the app; empty mirrors each request (USER_PORT_NAME)")
	fs.IntVar(&cfg.ContainerConcurrency, "container-concurrency", cfg.ContainerConcurrency, "requests in flight to the app at most; 0 for unlimited (CONTAINER_CONCURRENCY)")
	fs.IntVar(&cfg.QueueDepth, "queue-depth", cfg.QueueDepth, "requests that may wait for a slot; 0 for max(10×concurrency, 100)")
	fs.DurationVar(&cfg.RevisionTimeout, "revision-timeout", cfg.RevisionTimeout, "limit on a whole request; 0 for none (REVISION_TIMEOUT_SECONDS)")
	fs.DurationVar(&cfg.ResponseStartTimeout, "response-start-timeout", cfg.ResponseStartTimeout, "limit until the first response byte; 0 for none (REVISION_RESPONSE_START_TIMEOUT_SECONDS)")
	fs.DurationVar(&cfg.IdleTimeout, "idle-timeout", cfg.IdleTimeout, "limit between writes to the client; 0 for none (REVISION_IDLE_TIMEOUT_SECONDS)")
	fs.DurationVar(&cfg.DrainQuietPeriod, "drain-quiet-period", cfg.DrainQuietPeriod, "after SIGTERM, serve until no request came for this long (QUEUE_DRAIN_QUIET_PERIOD_SECONDS)")
	fs.StringVar(&cfg.ReadinessProbe, "readiness-probe", cfg.ReadinessProbe, "the app's readiness probe as JSON; empty for a TCP connect (SERVING_READINESS_PROBE)")
	fs.BoolVar(&cfg.EnableRequestLog, "request-log", cfg.EnableRequestLog, "log every request (SERVING_ENABLE_REQUEST_LOG)")
	fs.BoolVar(&cfg.EnableProfiling, "profiling", cfg.EnableProfiling, "serve /debug/pprof on the admin port (ENABLE_PROFILING)")
	verbosity := fs.Int("v", 0, "log verbosity (0 lifecycle, 1+ debug)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg.UserProtocol = queue.Protocol(protocol)
	level := slog.LevelInfo
	if *verbosity > 0 {
		level = slog.LevelDebug
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if err := cfg.Validate(); err != nil {
		return err
	}
	return queue.Run(ctx, cfg)
}
