package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/podautoscaler"
	"github.com/knitops/knit/dataplane/autoscaler"
	"github.com/knitops/knit/dataplane/kpa"
)

// runAutoscalerServe runs the live KPA on a cluster: it scrapes the
// queue-proxies, hears the activators' reports on --listen, and drives
// each PodAutoscaler's scale and SKS mode. config-autoscaler in
// knit-system is watched live. Inside knit dev the same code runs in
// process.
func runAutoscalerServe(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("knit autoscaler run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig `file`; empty for $KUBECONFIG, in-cluster or ~/.kube/config")
	listen := fs.String("listen", ":8080", "`address` the activators post their stats and pokes to")
	metricsAddr := fs.String("metrics-listen", ":9090", "`address` of /metrics; 0 for none")
	domain := fs.String("domain", "svc.cluster.local", "default domain (only the autoscaler keys of the config matter here)")
	verbosity := fs.Int("v", 0, "log verbosity")
	if err := fs.Parse(args); err != nil {
		return err
	}
	setupLogging(stderr, *verbosity)
	mgr, err := newManager(*kubeconfig, *metricsAddr)
	if err != nil {
		return err
	}
	store, err := config.NewStore(*domain)
	if err != nil {
		return err
	}
	scaler := kpa.New(func() *autoscaler.Config { return store.Load().Autoscaler }, mgr.GetClient())
	for _, setup := range []func() error{
		func() error { return store.SetupWithManager(mgr) },
		func() error { return mgr.Add(scaler) },
		func() error { return podautoscaler.SetupWithManager(mgr, scaler, scaler.Wakes()) },
	} {
		if err := setup(); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	srv := &http.Server{Handler: scaler.ActivatorReceiver(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 2)
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
	go func() { errc <- mgr.Start(ctx) }()
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return errors.Join(err, srv.Shutdown(shutdown))
}
