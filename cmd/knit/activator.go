package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/knitops/knit/dataplane/activator"
	"github.com/knitops/knit/platform"
)

// runActivator runs the activator standalone against a cluster: Revisions
// and EndpointSlices from its API, load and pokes posted to the
// autoscaler. Every replica serves; SIGTERM drains (see
// --drain-quiet-period), then lets requests finish. The internal keys
// sign its reports and check that each request's Revision was signed by
// the ingress.
func runActivator(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("knit activator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f componentFlags
	f.register(fs, false, true)
	listen := fs.String("listen", ":8012", "`address` requests arrive on (HTTP/1.1 and h2c)")
	autoscalerURL := fs.String("autoscaler-url", "", "base `URL` of the autoscaler (POST <url>"+activator.StatsPath+", <url>"+activator.PokePath+"); empty reports nothing")
	name := fs.String("name", os.Getenv("POD_NAME"), "this activator's name in its reports ($POD_NAME)")
	self := fs.String("self", os.Getenv("POD_IP"), "this activator's `address` among the knit-activator Service's endpoints ($POD_IP): replicas and capacity are split across activators by it")
	maxWaiting := fs.Int("max-waiting", activator.DefaultMaxWaiting, "requests that may wait per revision")
	maxWait := fs.Duration("max-wait", activator.DefaultMaxWait, "longest a request waits for a replica (a revision's shorter timeoutSeconds wins)")
	keyFile := internalKeyFlag(fs)
	if err := f.parse(fs, args); err != nil {
		return err
	}
	setupLogging(stderr, f.verbosity)
	log := slog.Default()
	keys, err := loadInternalKeys(*keyFile)
	if err != nil {
		return err
	}
	mgr, err := f.newManager("", nil)
	if err != nil {
		return err
	}
	opts := activator.Options{Registry: metrics.Registry, MaxWaiting: *maxWaiting, MaxWait: *maxWait, Logger: log, Self: *self, RouteKeys: keys}
	if *autoscalerURL != "" {
		rep, err := activator.NewHTTPReporter(*autoscalerURL, *name, keys, log)
		if err != nil {
			return err
		}
		if err := mgr.Add(rep); err != nil {
			return err
		}
		opts.Reporter = rep
	} else {
		log.Warn("No --autoscaler-url: revisions at zero are not woken by this activator")
	}
	act, err := activator.New(opts)
	if err != nil {
		return err
	}
	if err := act.SetupWithManager(mgr); err != nil {
		return err
	}
	srv, err := platform.Listen("activator", *listen, act)
	if err != nil {
		return err
	}
	srv.QuietPeriod = f.drain
	srv.ShutdownTimeout = *maxWait
	if err := mgr.Add(srv); err != nil {
		return err
	}
	if err := addReadyChecks(mgr, map[string]healthz.Checker{"revisions-synced": cacheSynced(mgr), "serving": srv.ReadyCheck}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
