// Command knit is the one binary of knit: `knit dev` runs everything
// locally; `knit controller`, `autoscaler run`, `activator`, `ingress` and
// `gitserver` run each component on a cluster (the Helm chart's
// Deployments).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand: its one-line summary and what it runs.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{
	"activator":  {summary: "the activator: buffers requests for revisions at zero, throttles, probes replicas", run: runActivator},
	"dev":        {summary: "run knit locally: control plane, webhooks, controllers, ingress, Git server", run: runDev},
	"autoscaler": {summary: "the KPA autoscaler; `knit autoscaler simulate` replays a load trace", run: runAutoscaler},
	"controller": {summary: "the reconcilers and admission webhooks on a cluster (leader-elected; webhook certificates rotated itself)", run: runController},
	"gitserver":  {summary: "the Git server and forge webhook receivers on a cluster", run: runGitServer},
	"ingress":    {summary: "the ingress on a cluster: Host routing, traffic splits, tags", run: runIngress},
	"pr":         {summary: "open, close or merge a pull request without a forge: a tagged preview and a canary", run: runPR},
	"queue":      {summary: "the queue-proxy sidecar beside an app replica (Knative's environment variables)", run: runQueue},
	"version":    {summary: "print knit's version", run: runVersion},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		return 2
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "knit: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	if err := cmd.run(ctx, args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 2
		}
		fmt.Fprintf(stderr, "knit %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: knit <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-10s %s\n", name, commands[name].summary)
	}
}
