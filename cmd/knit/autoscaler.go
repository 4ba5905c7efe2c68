package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/knitops/knit/api/autoscaling"
	"github.com/knitops/knit/dataplane/autoscaler"
)

// runAutoscaler dispatches `knit autoscaler <subcommand>`: the offline
// simulator, or the live autoscaler.
func runAutoscaler(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		autoscalerUsage(stderr)
		return flag.ErrHelp
	}
	switch args[0] {
	case "simulate":
		return runAutoscalerSimulate(args[1:], stdout, stderr)
	case "run":
		return runAutoscalerServe(ctx, args[1:], stderr)
	default:
		fmt.Fprintf(stderr, "knit autoscaler: unknown subcommand %q\n\n", args[0])
		autoscalerUsage(stderr)
		return flag.ErrHelp
	}
}

func autoscalerUsage(w io.Writer) {
	fmt.Fprint(w, `usage: knit autoscaler <subcommand> [flags]

subcommands:
  simulate   replay a load trace through the KPA and print its decisions
  run        the live autoscaler against a cluster (scrapes queue-proxies, hears activators)
`)
}

// runAutoscalerSimulate is `knit autoscaler simulate`: flags in, the
// package's Simulate does the rest.
func runAutoscalerSimulate(args []string, stdout, stderr io.Writer) error {
	opts := autoscaler.Options{Annotations: map[string]string{}, Config: map[string]string{}}
	fs := flag.NewFlagSet("knit autoscaler simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tracePath := fs.String("trace", "", "CSV `file` with header second,concurrency,rps, one row per second from 0 (- for stdin)")
	fs.Var(keyValues{m: opts.Annotations, prefix: autoscaling.Prefix}, "annotation",
		"revision annotation `KEY=VALUE`, repeatable; a KEY without a domain gets "+autoscaling.Prefix)
	fs.Var(keyValues{m: opts.Config}, "config", "config-autoscaler `KEY=VALUE`, repeatable")
	fs.Int64Var(&opts.ContainerConcurrency, "container-concurrency", 0, "the revision's containerConcurrency (0: unlimited)")
	startDelay := fs.Int("pod-start-delay", 0, "`seconds` a new pod takes to become ready")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: knit autoscaler simulate --trace FILE [flags]\n\nprints second,desired_pods,ready_pods,panic for every autoscaler tick\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("simulate: unexpected argument %q", fs.Arg(0))
	}
	if *tracePath == "" {
		fs.Usage()
		return errors.New("simulate: --trace is required")
	}
	if *startDelay < 0 {
		return fmt.Errorf("simulate: --pod-start-delay %d must not be negative", *startDelay)
	}
	opts.PodStartDelay = time.Duration(*startDelay) * time.Second
	trace, closeTrace, err := openTrace(*tracePath)
	if err != nil {
		return err
	}
	defer closeTrace()
	if err := autoscaler.Simulate(trace, opts, stdout); err != nil {
		return fmt.Errorf("simulate %s: %w", *tracePath, err)
	}
	return nil
}

func openTrace(path string) (io.Reader, func(), error) {
	if path == "-" {
		return os.Stdin, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("simulate: %w", err)
	}
	return f, func() { f.Close() }, nil
}

// keyValues is a repeatable KEY=VALUE flag filling a map; prefix, when set,
// is added to keys that have no domain of their own.
type keyValues struct {
	m      map[string]string
	prefix string
}

func (kv keyValues) String() string { return "" }

func (kv keyValues) Set(s string) error {
	key, value, ok := strings.Cut(s, "=")
	if !ok || key == "" {
		return fmt.Errorf("%q is not KEY=VALUE", s)
	}
	if kv.prefix != "" && !strings.Contains(key, "/") {
		key = kv.prefix + key
	}
	if _, dup := kv.m[key]; dup {
		return fmt.Errorf("%s given twice", key)
	}
	kv.m[key] = value
	return nil
}
