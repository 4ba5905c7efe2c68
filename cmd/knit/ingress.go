package main

import (
	"context"
	"flag"
	"io"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/knitops/knit/dataplane/forward"
	"github.com/knitops/knit/dataplane/ingress"
	"github.com/knitops/knit/platform"
)

// runIngress is `knit ingress`: the cluster's entry point. It routes by
// Host to each Route's revisions with its traffic split and tags, reading
// Routes and EndpointSlices from the API, and config-features for
// tag-header-based-routing. Every replica serves; SIGTERM drains (see
// --drain-quiet-period) before it stops.
func runIngress(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("knit ingress", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f componentFlags
	f.register(fs, false, true)
	listen := fs.String("listen", ":8080", "`address` requests arrive on (HTTP/1.1 and h2c)")
	keyFile := internalKeyFlag(fs)
	if err := f.parse(fs, args); err != nil {
		return err
	}
	setupLogging(stderr, f.verbosity)
	keys, err := loadInternalKeys(*keyFile)
	if err != nil {
		return err
	}
	// Its one ConfigMap is config-features, the one its Role grants.
	mgr, err := f.newManager("", func(o *ctrl.Options) { ingress.RestrictCache(&o.Cache) })
	if err != nil {
		return err
	}
	router := ingress.NewRouter()
	router.SignRoutes(keys) // the activators serve only requests it signed
	if err := ingress.SetupWithManager(mgr, router); err != nil {
		return err
	}
	srv, err := platform.Listen("ingress", *listen, router)
	if err != nil {
		return err
	}
	forward.DefaultLimits.Apply(srv.Server) // it faces the Internet: idle and head limits
	srv.QuietPeriod = f.drain
	if err := mgr.Add(srv); err != nil {
		return err
	}
	if err := addReadyChecks(mgr, map[string]healthz.Checker{"routes-synced": cacheSynced(mgr), "serving": srv.ReadyCheck}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
