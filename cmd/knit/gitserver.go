package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/gitsync/gitserver"
	"github.com/knitops/knit/gitsync/hub"
	"github.com/knitops/knit/internal/bytesize"
	"github.com/knitops/knit/platform"
)

// runGitServer is `knit gitserver`: knit's Git server and forge webhook
// receivers on a cluster, over bare repositories on a volume. A push or a
// verified webhook asks the controller for a sync through the API (the
// knit.dev/requested-at annotation), so the two never share a process.
func runGitServer(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("knit gitserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f componentFlags
	f.register(fs, false, true)
	listen := fs.String("listen", ":8090", "`address` of Git (/git/<repo>.git) and forge webhooks (/hooks/…)")
	root := fs.String("root", "/var/lib/knit/git", "`directory` of the bare repositories (a persistent volume)")
	publicURL := fs.String("public-url", "", "base `URL` the controller fetches pushed repositories from, e.g. http://knit-gitserver.knit-system.svc:8090; required")
	namespace := fs.String("namespace", hub.DefaultNamespace, "`namespace` owning every repository --repository-namespaces does not name: a first push deploys there, and only GitRepositories there are synced by pushes and fetched with the token")
	repoNamespaces := fs.String("repository-namespaces", "", "comma-separated `repo=namespace` assignments of repositories to other namespaces than --namespace (give the controller the same)")
	tlsCert := fs.String("tls-cert-file", "", "`file` of the PEM certificate (chain) to serve HTTPS with, e.g. a mounted kubernetes.io/tls Secret's tls.crt; reread when it changes")
	tlsKey := fs.String("tls-key-file", "", "`file` of the certificate's PEM private key")
	plainHTTP := fs.Bool("plain-http", false, "serve clear-text HTTP without --tls-cert-file: every request's token, which opens every repository, then crosses the network readable")
	tokenSecret := fs.String("token-secret", hub.DefaultTokenSecret, "`name` of the Secret in "+config.SystemNamespace+
		" holding the token every push and fetch needs (key "+hub.TokenKey+"); made on first start when missing")
	hosts := fs.String("hosts", "", "comma-separated host `names` the Git server answers for besides loopback, --public-url's host and IP addresses: its Service's DNS names, a public name")
	var maxPush int64
	fs.Var(bytesize.NewValue(&maxPush, gitserver.DefaultMaxPushBytes), "max-push-size",
		"largest `size` of a push (e.g. 100MiB): a bigger one is refused, with a message git shows, and nothing of it is stored")
	if err := f.parse(fs, args); err != nil {
		return err
	}
	if *publicURL == "" {
		return errors.New("--public-url is required: the GitRepositories a push creates point there")
	}
	owners, err := gitserver.ParseOwners(*repoNamespaces)
	if err != nil {
		return fmt.Errorf("--repository-namespaces: %w", err)
	}
	tlsConfig, err := serverTLS(*tlsCert, *tlsKey, *plainHTTP)
	if err != nil {
		return err
	}
	setupLogging(stderr, f.verbosity)
	// Secrets are read one by one when a webhook names its repository's:
	// no cluster-wide Secret informer.
	mgr, err := f.newManager("", func(o *ctrl.Options) {
		o.Client.Cache = &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}
	})
	if err != nil {
		return err
	}
	token := hub.TokenSecret{Reader: mgr.GetAPIReader(), Key: types.NamespacedName{Namespace: config.SystemNamespace, Name: *tokenSecret}}
	if err := token.Ensure(ctx, mgr.GetClient()); err != nil {
		return err
	}
	// Any IP address is a name of the server: the controller and the
	// journeys reach it by ClusterIP, users by node address or
	// port-forward, and DNS rebinding needs a name.
	h, err := hub.New(hub.Options{Root: *root, BaseURL: *publicURL, Namespace: *namespace, RepositoryNamespaces: owners, Log: ctrl.Log.WithName("git"),
		Token: token.Token, Hosts: splitList(*hosts), AnyIPHost: true,
		MaxPushBytes: maxPush, PushLimitHint: "ask the cluster's operator to raise the Helm value gitserver.maxPushSize (knit gitserver --max-push-size)"})
	if err != nil {
		return err
	}
	defer h.Close()
	h.SetClient(mgr.GetClient())
	srv, err := platform.Listen("git", *listen, h.Handler())
	if err != nil {
		return err
	}
	if tlsConfig != nil {
		// Only TLS is spoken on the port: a clear-text request never
		// reaches the handler, token or not.
		srv.Listener = tls.NewListener(srv.Listener, tlsConfig)
	}
	srv.QuietPeriod = f.drain
	if err := mgr.Add(srv); err != nil {
		return err
	}
	if err := addReadyChecks(mgr, map[string]healthz.Checker{"serving": srv.ReadyCheck}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// serverTLS is the Git server's TLS configuration: nil, for clear text,
// only when plainHTTP says so explicitly.
func serverTLS(certFile, keyFile string, plainHTTP bool) (*tls.Config, error) {
	switch {
	case certFile == "" && keyFile == "" && plainHTTP:
		return nil, nil
	case certFile == "" && keyFile == "":
		return nil, errors.New("--tls-cert-file and --tls-key-file are required: every push and fetch carries the token to every repository; " +
			"pass --plain-http to serve clear text anyway (loopback, or a network you trust)")
	case certFile == "" || keyFile == "":
		return nil, errors.New("--tls-cert-file and --tls-key-file go together")
	case plainHTTP:
		return nil, errors.New("--plain-http and --tls-cert-file exclude each other")
	}
	return gitserver.TLSConfig(certFile, keyFile)
}

// splitList splits a comma-separated flag, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
