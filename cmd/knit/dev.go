package main

import (
	"context"
	"flag"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/knitops/knit/gitsync/gitserver"
	gitsource "github.com/knitops/knit/gitsync/source"
	"github.com/knitops/knit/internal/bytesize"
	"github.com/knitops/knit/local/buildproxy"
	"github.com/knitops/knit/local/dev"
)

func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var opts dev.Options
	fs := flag.NewFlagSet("knit dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&opts.StateDir, "state-dir", ".knit", "directory for etcd data, keys, logs and the kubeconfig; survives restarts")
	fs.StringVar(&opts.HTTPAddr, "http-addr", "127.0.0.1:8080", "ingress address: every route's host is served here")
	fs.StringVar(&opts.HTTPSAddr, "https-addr", "127.0.0.1:8443", "ingress HTTPS address: every route's host over TLS, *.localhost with knit dev's own CA (kept in the state dir; the banner says how to trust it)")
	fs.StringVar(&opts.GitAddr, "git-addr", "127.0.0.1:8090", "Git server and forge webhook address")
	fs.StringVar(&opts.MetricsAddr, "metrics-addr", "", "serve Prometheus metrics (controllers' reconciles and queues, activator, autoscaler) at /metrics here, and Go's profiles at /debug/pprof/; empty serves none")
	fs.StringVar(&opts.Kubeconfig, "kubeconfig", "", "use this cluster's API instead of starting one")
	fs.StringVar(&opts.BinDir, "bin-dir", "bin", "where `make tools` put kube-apiserver and etcd")
	fs.StringVar(&opts.ReplicaNetwork, "replica-network", "auto", "where replicas listen: isolated (a network namespace each, reachable only through knit; root on Linux), shared (this machine's network, on loopback ports), or auto (isolated when possible)")
	fs.Var(bytesize.NewValue(&opts.GitMaxPushBytes, gitserver.DefaultMaxPushBytes), "git-max-push-size",
		"largest `size` of a push to knit's Git server (e.g. 100MiB): a bigger one is refused, with a message git shows, and nothing of it is stored")
	fs.Var(bytesize.NewValue(&opts.GitMaxFetchBytes, gitsource.DefaultMaxFetchBytes), "git-max-fetch-size",
		"largest `size` of what one fetch of a GitRepository may bring, every file of its branch heads (e.g. 100MiB): heads that weigh more are not synced (Synced=False, reason TooLarge)")
	fs.Func("build-mirror", "`REGISTRY=MIRROR[,MIRROR…]`: dockerfile:// builds pull REGISTRY's images (docker.io, say) from the mirrors first; repeat for more", func(v string) error {
		opts.BuildMirrors = append(opts.BuildMirrors, v)
		return nil
	})
	fs.Func("build-allow-host", "a `host[:port]` dockerfile:// RUN steps may reach, through a proxy knit dev runs (pypi.org, *.example.org, 127.0.0.1:8080; no port: 80 and 443; comma-separate several or repeat); none by default: steps reach no network", func(v string) error {
		if _, err := buildproxy.ParseAllowList(v); err != nil {
			return err
		}
		opts.BuildAllowHosts = append(opts.BuildAllowHosts, v)
		return nil
	})
	fs.Func("plain-http-registry", "a registry (`host:port`) images may be pulled from over plain HTTP, besides loopback ones; repeat for more", func(v string) error {
		opts.PlainHTTPRegistries = append(opts.PlainHTTPRegistries, v)
		return nil
	})
	verbosity := fs.Int("v", 0, "log verbosity (0 quiet, 1 info, 2+ debug)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	setupLogging(stderr, *verbosity)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts.Restart = restartOnHangup(ctx, cancel)
	return dev.Run(ctx, opts, stdout)
}

// restartOnHangup turns SIGHUP into a restart of the controllers, as
// daemons reload on it, except when the terminal knit dev runs in went
// away: that hangup still stops it (stop), as it always did.
func restartOnHangup(ctx context.Context, stop context.CancelFunc) <-chan struct{} {
	terminal := -1
	for _, fd := range []int{0, 1, 2} {
		if term.IsTerminal(fd) {
			terminal = fd
			break
		}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	restart := make(chan struct{}, 1)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			if terminal >= 0 && !term.IsTerminal(terminal) {
				stop()
				return
			}
			select {
			case restart <- struct{}{}:
			default: // a restart is pending already
			}
		}
	}()
	return restart
}
