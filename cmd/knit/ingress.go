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
// tag-header-based-routing, config-network for http-protocol, and the
// certificate Secrets of knit-system for HTTPS (--listen-tls). Every
// replica serves; SIGTERM drains (see --drain-quiet-period) before it
// stops.
func runIngress(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("knit ingress", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f componentFlags
	f.register(fs, false, true)
	listen := fs.String("listen", ":8080", "`address` requests arrive on (HTTP/1.1 and h2c)")
	listenTLS := fs.String("listen-tls", "", "`address` HTTPS requests arrive on (HTTP/1.1 and h2 by ALPN), with the certificates of knit-system's Secrets labelled "+ingress.CertificateLabel+"; empty serves no HTTPS")
	listenInternal := fs.String("listen-internal", "", "`address` the cluster's own callers reach through Routes' placeholder Services: every Route's in-cluster names and cluster-local Routes besides the public hosts (plain HTTP and h2c); never expose it outside the cluster. Empty serves none")
	httpsPort := fs.Int("https-port", 443, "the `port` clients reach HTTPS on, where http-protocol Redirected sends them")
	noFastPath := fs.Bool("disable-fast-path", false, "send every request through httputil.ReverseProxy instead of the HTTP/1 fast path: the path the fast path is checked against, and a way back should it ever misbehave")
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
	if *noFastPath {
		router.DisableFastPath()
	}
	router.SignRoutes(keys) // the activators serve only requests it signed
	if err := ingress.SetupWithManager(mgr, router); err != nil {
		return err
	}
	srv, err := platform.Listen("ingress", *listen, router)
	if err != nil {
		return err
	}
	servers := map[string]*platform.Server{"serving": srv}
	if *listenTLS != "" {
		tlsSrv, err := platform.ListenTLS("ingress-https", *listenTLS, router, router.TLSConfig(*httpsPort, nil))
		if err != nil {
			return err
		}
		servers["serving-https"] = tlsSrv
	}
	if *listenInternal != "" {
		internal, err := platform.Listen("ingress-internal", *listenInternal, router.Internal())
		if err != nil {
			return err
		}
		servers["serving-internal"] = internal
	}
	checks := map[string]healthz.Checker{"routes-synced": cacheSynced(mgr)}
	for check, s := range servers {
		forward.DefaultLimits.Apply(s.Server) // it faces the Internet: idle and head limits
		s.QuietPeriod = f.drain
		if err := mgr.Add(s); err != nil {
			return err
		}
		checks[check] = s.ReadyCheck
	}
	if err := addReadyChecks(mgr, checks); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
