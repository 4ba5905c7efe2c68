package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/gitrepository"
	"github.com/knitops/knit/gitsync/gitserver"
	"github.com/knitops/knit/gitsync/hub"
	"github.com/knitops/knit/gitsync/plan"
	gitsource "github.com/knitops/knit/gitsync/source"
	"github.com/knitops/knit/internal/bytesize"
	"github.com/knitops/knit/platform"
	"github.com/knitops/knit/webhooks"
	"github.com/knitops/knit/webhooks/certs"
)

// runController is `knit controller`: the serving and GitOps reconcilers
// and the admission webhooks on a cluster. Replicas elect a leader for the
// reconcilers; all of them serve webhooks with a certificate they keep in
// a Secret and rotate themselves.
func runController(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("knit controller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f componentFlags
	f.register(fs, true, false)
	var builds buildFlags
	builds.register(fs)
	queueImage := fs.String("queue-image", "", "queue-proxy sidecar `image` (its entrypoint is knit-queue); required")
	domain := fs.String("domain", "svc.cluster.local", "Route `domain` when config-domain names none")
	cacheDir := fs.String("cache-dir", filepath.Join(os.TempDir(), "knit"), "`directory` for fetched Git repositories")
	ingressURL := fs.String("ingress-url", "http://knit-ingress."+config.SystemNamespace+".svc",
		"plain-HTTP `URL` of knit's ingress as the controller reaches it, where ACME challenge responses (external-domain-tls) are checked before the CA validates them; empty skips the check")
	internalIngress := fs.String("internal-ingress", "knit-ingress-internal."+config.SystemNamespace+".svc.cluster.local",
		"DNS `name` of the ingress's internal listener, which every Route's placeholder Service (<route>.<namespace>.svc) points at; empty makes none")
	webhookPort := fs.Int("webhook-port", 9443, "HTTPS `port` of the admission webhooks")
	webhookService := fs.String("webhook-service", "knit-webhook", "`name` of the Service in "+config.SystemNamespace+" the API server calls the webhooks through")
	webhookSecret := fs.String("webhook-secret", "knit-webhook-certs", "`name` of the Secret in "+config.SystemNamespace+" holding the webhook certificate")
	gitServerURL := fs.String("gitserver-url", "", "base `URL` of knit's Git server, e.g. http://knit-gitserver.knit-system.svc:8090: fetches and builds of its repositories present its token; empty for none")
	gitServerNamespace := fs.String("gitserver-namespace", hub.DefaultNamespace, "`namespace` owning the Git server's repositories (its --namespace): only GitRepositories there are fetched with its token")
	gitServerRepoNamespaces := fs.String("gitserver-repository-namespaces", "", "comma-separated `repo=namespace` assignments of the Git server's repositories to other namespaces (its --repository-namespaces)")
	gitServerToken := fs.String("gitserver-token-secret", hub.DefaultTokenSecret, "`name` of the Secret in "+config.SystemNamespace+" holding the Git server's token (key "+hub.TokenKey+")")
	gitopsSA := fs.String("gitops-default-service-account", "",
		"`name` of the ServiceAccount, in each GitRepository's namespace, a sync impersonates when its GitRepository names no spec.serviceAccountName; empty writes as the controller itself")
	var gitopsKinds kindList
	fs.Var(&gitopsKinds, "gitops-allowed-kinds",
		"comma-separated `kinds` (Kind.group) any GitRepository may deploy; spec.allowedKinds only narrows them (default "+strings.Join(plan.DefaultAllowedKinds, ",")+")")
	var maxFetch int64
	fs.Var(bytesize.NewValue(&maxFetch, gitsource.DefaultMaxFetchBytes), "git-max-fetch-size",
		"largest `size` of what one fetch of a GitRepository may bring, every file of its branch heads (e.g. 100MiB): heads that weigh more are not synced (Synced=False, reason TooLarge)")
	if err := f.parse(fs, args); err != nil {
		return err
	}
	if *queueImage == "" {
		return errors.New("--queue-image is required: the image every revision's queue-proxy sidecar runs")
	}
	buildConfig, err := builds.config()
	if err != nil {
		return err
	}
	if buildConfig != nil && *gitServerURL != "" {
		buildConfig.GitServerURL, buildConfig.GitServerSecret = *gitServerURL, *gitServerToken
	}
	setupLogging(stderr, f.verbosity)
	cfg, err := restConfig(f.kubeconfig)
	if err != nil {
		return err
	}
	direct, err := client.New(cfg, client.Options{})
	if err != nil {
		return fmt.Errorf("API client: %w", err)
	}
	certManager, err := certs.New(certs.Options{
		Client: direct, Namespace: config.SystemNamespace, Service: *webhookService, Secret: *webhookSecret,
		Mutating: []string{webhooks.DefaultingName}, Validating: []string{webhooks.ValidationName},
		Log: ctrl.Log.WithName("webhook-certs"),
	})
	if err != nil {
		return err
	}
	mgr, err := f.newManager("knit-controller", func(o *ctrl.Options) {
		if buildConfig != nil {
			cacheJobs(&o.Cache, buildConfig.Namespace)
		}
		o.WebhookServer = webhook.NewServer(webhook.Options{Port: *webhookPort, TLSOpts: []func(*tls.Config){
			func(c *tls.Config) { c.GetCertificate = certManager.GetCertificate },
		}})
	})
	if err != nil {
		return err
	}
	store, err := config.NewStore(*domain)
	if err != nil {
		return err
	}
	var gitServer *gitrepository.GitServer
	if *gitServerURL != "" {
		token := hub.TokenSecret{Reader: mgr.GetAPIReader(), Key: types.NamespacedName{Namespace: config.SystemNamespace, Name: *gitServerToken}}
		owners, err := gitserver.ParseOwners(*gitServerRepoNamespaces)
		if err != nil {
			return fmt.Errorf("--gitserver-repository-namespaces: %w", err)
		}
		gitServer = &gitrepository.GitServer{URL: *gitServerURL, Token: token.Token,
			Owners: gitserver.Owners{Default: *gitServerNamespace, Repos: owners}}
	}
	cp, err := platform.SetupControlPlane(mgr, platform.ControlPlaneOptions{
		Store: store, QueueImage: *queueImage, GitCache: &gitsource.Cache{Dir: filepath.Join(*cacheDir, "git"), MaxFetchBytes: maxFetch,
			LimitHint: "ask the cluster's operator to raise the Helm value controller.gitMaxFetchSize (knit controller --git-max-fetch-size)"},
		Webhooks: true, Logger: slog.Default(), Builds: buildConfig, GitServer: gitServer, IngressURL: *ingressURL, InternalIngress: *internalIngress,
		GitOpsIdentity: gitrepository.Identity{DefaultServiceAccount: *gitopsSA, AllowedKinds: gitopsKinds.kinds},
	})
	if err != nil {
		return err
	}
	defer cp.Close()
	if err := mgr.Add(certManager); err != nil {
		return err
	}
	if err := addReadyChecks(mgr, map[string]healthz.Checker{
		"webhook-certificate": certManager.ReadyCheck,
		"webhook-server":      mgr.GetWebhookServer().StartedChecker(),
	}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
