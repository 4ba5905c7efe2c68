package main

import (
	"context"
	"flag"
	"io"

	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/platform"
)

// runAutoscalerServe runs the live KPA on a cluster: it scrapes the
// queue-proxies, hears the activators' reports on --listen, and drives
// each PodAutoscaler's scale and SKS mode. config-autoscaler in
// knit-system is watched live. With --leader-elect only the leader
// decides and only the leader is ready, so the activators' reports,
// sent through the autoscaler Service, reach the replica that uses them;
// only reports bearing the internal keys' token are heard.
// Inside knit dev the same code runs in process.
func runAutoscalerServe(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("knit autoscaler run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f componentFlags
	f.register(fs, true, false)
	listen := fs.String("listen", ":8080", "`address` the activators post their stats and pokes to")
	keyFile := internalKeyFlag(fs)
	if err := f.parse(fs, args); err != nil {
		return err
	}
	setupLogging(stderr, f.verbosity)
	keys, err := loadInternalKeys(*keyFile)
	if err != nil {
		return err
	}
	mgr, err := f.newManager("knit-autoscaler", nil)
	if err != nil {
		return err
	}
	// Only the autoscaler keys of the config matter here; the domain is unused.
	store, err := config.NewStore("svc.cluster.local")
	if err != nil {
		return err
	}
	if err := store.SetupWithManager(mgr); err != nil {
		return err
	}
	scaler, err := platform.SetupAutoscaler(mgr, store, nil)
	if err != nil {
		return err
	}
	srv, err := platform.Listen("autoscaler", *listen, scaler.ActivatorReceiver(keys))
	if err != nil {
		return err
	}
	if err := mgr.Add(srv); err != nil {
		return err
	}
	checks := map[string]healthz.Checker{"stats-receiver": srv.ReadyCheck}
	if f.leaderElect {
		checks["leader"] = elected(mgr)
	}
	if err := addReadyChecks(mgr, checks); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
