// Command knit-build-proxy is the allow-list HTTP proxy of a cluster's
// dockerfile:// build (package buildproxy, as knit dev runs it in
// process): the build Job's BuildKit step starts it in the pod's network
// namespace, listening on a Unix socket, and relays to it from the
// loopback of the network namespace buildkitd and the RUN steps share,
// which holds nothing else. It relays to the hosts --allow names and
// refuses every other with a 403 that says so.
//
//	knit-build-proxy --socket /tmp/proxy.sock --allow pypi.org --allow files.pythonhosted.org
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"

	"github.com/knitops/knit/local/buildproxy"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "knit-build-proxy:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fl := flag.NewFlagSet("knit-build-proxy", flag.ContinueOnError)
	socket := fl.String("socket", "", "the Unix socket to listen on")
	var allow []string
	fl.Func("allow", "a `host[:port]` RUN steps may reach (repeatable; *.example.org; no port: 80 and 443)", func(v string) error {
		allow = append(allow, v)
		return nil
	})
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *socket == "" || fl.NArg() > 0 {
		return errors.New("usage: knit-build-proxy --socket PATH [--allow HOST[:PORT]]...")
	}
	list, err := buildproxy.ParseAllowList(allow...)
	if err != nil {
		return err
	}
	_ = os.Remove(*socket)
	l, err := net.Listen("unix", *socket)
	if err != nil {
		return err
	}
	log := logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, nil))
	p := buildproxy.New(buildproxy.Config{Allow: list, Log: log, Who: "knit's build", Setting: "Helm value build.dockerfile.allowHosts:"})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); _ = p.Close() }()
	log.Info("Serving RUN steps", "socket", *socket, "allow", list.String())
	return p.Serve(l)
}
