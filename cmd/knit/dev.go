package main

import (
	"context"
	"flag"
	"io"

	"github.com/knitops/knit/local/dev"
)

func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var opts dev.Options
	fs := flag.NewFlagSet("knit dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&opts.StateDir, "state-dir", ".knit", "directory for etcd data, keys, logs and the kubeconfig; survives restarts")
	fs.StringVar(&opts.HTTPAddr, "http-addr", "127.0.0.1:8080", "ingress address: every route's host is served here")
	fs.StringVar(&opts.GitAddr, "git-addr", "127.0.0.1:8090", "Git server and forge webhook address")
	fs.StringVar(&opts.Kubeconfig, "kubeconfig", "", "use this cluster's API instead of starting one")
	fs.StringVar(&opts.BinDir, "bin-dir", "bin", "where `make tools` put kube-apiserver and etcd")
	verbosity := fs.Int("v", 0, "log verbosity (0 quiet, 1 info, 2+ debug)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	setupLogging(stderr, *verbosity)
	return dev.Run(ctx, opts, stdout)
}
