package dev

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/knitops/knit/local/controlplane"
)

// apiServer is the Kubernetes API knit dev talks to: its own embedded one,
// or the user's when --kubeconfig is given. Everything after startup is the
// same code for both.
type apiServer struct {
	config     *rest.Config
	url        string
	kubeconfig string
	issuer     certIssuer
	stop       func() error
	// own is knit dev's own control plane; nil for --kubeconfig's.
	own *controlplane.ControlPlane
}

// The client-side rate limit of knit dev's API clients. client-go's
// default (5 requests/s, bursts of 10) paces a Service's dozen writes to
// seconds: a thousand Services would take many minutes while the API
// server idles. knit dev talks to an API server of its own on loopback,
// whose max-requests-inflight still bounds the load.
const (
	devAPIQPS   = 1000
	devAPIBurst = 2000
)

func startAPI(ctx context.Context, opts Options) (*apiServer, error) {
	if opts.Kubeconfig != "" {
		return useExistingAPI(ctx, opts)
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{StateDir: opts.StateDir, BinDir: opts.BinDir})
	if err != nil {
		return nil, err
	}
	cfg := cp.RESTConfig()
	cfg.QPS, cfg.Burst = devAPIQPS, devAPIBurst
	return &apiServer{config: cfg, url: cp.APIURL(), kubeconfig: cp.KubeconfigPath(), issuer: cp, stop: cp.Stop, own: cp}, nil
}

func useExistingAPI(ctx context.Context, opts Options) (*apiServer, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load --kubeconfig %s: %w", opts.Kubeconfig, err)
	}
	if err := refuseClusterWithNodes(ctx, cfg); err != nil {
		return nil, err
	}
	ca, err := controlplane.LoadOrCreateCA(opts.StateDir)
	if err != nil {
		return nil, err
	}
	return &apiServer{config: cfg, url: cfg.Host, kubeconfig: opts.Kubeconfig, issuer: ca, stop: func() error { return nil }}, nil
}
