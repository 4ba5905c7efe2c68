package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/forge"
	"github.com/knitops/knit/gitsync/gitserver"
	"github.com/knitops/knit/gitsync/pullrequest"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// DefaultNamespace is where a repository created by a first push deploys
// unless Options.Namespace says otherwise.
const DefaultNamespace = "default"

// webhookSecretKey is the key of a GitRepository's Secret holding the
// forge webhook secret.
const webhookSecretKey = "webhookSecret"

// Options configure a Hub.
type Options struct {
	// Root holds the bare repositories.
	Root string
	// BaseURL is how the GitRepository reconciler reaches this hub
	// (http://<addr>): a pushed repository is tracked at
	// <BaseURL>/git/<name>.git.
	BaseURL string
	// Namespace owns every repository RepositoryNamespaces does not
	// name: a first push creates its GitRepository there, and a push
	// syncs only GitRepositories there. DefaultNamespace when empty.
	Namespace string
	// RepositoryNamespaces assigns repositories, by name, to other
	// namespaces (gitserver.Owners); the controller must be given the
	// same, so that only GitRepositories of the owning namespace are
	// fetched with the token.
	RepositoryNamespaces map[string]string
	// Token is the credential every push and fetch must carry
	// (gitserver.Options.Token); required. Forge webhooks are not Git
	// requests: they keep their own HMAC signatures.
	Token func(context.Context) (string, error)
	// Hosts and AnyIPHost are the Host headers the Git server answers
	// besides the loopback names (gitserver.Options); BaseURL's host is
	// always one of them.
	Hosts     []string
	AnyIPHost bool
	// Trigger asks for a sync of a repository now. nil means RequestSync:
	// through the API, which works wherever the reconciler runs.
	Trigger func(context.Context, client.Client, types.NamespacedName) error
	// Log receives pushes, syncs asked for and errors.
	Log logr.Logger
	// MaxPushBytes bounds a push, and PushLimitHint says how to raise the
	// limit (gitserver.Options' MaxPushBytes and LimitHint).
	MaxPushBytes  int64
	PushLimitHint string
}

// Hub serves pushes and forge webhooks. Until SetClient is called (the API
// is not reachable yet) pushes are stored but not synced, and webhooks are
// refused with 503 so the forge redelivers.
type Hub struct {
	opts     Options
	owners   gitserver.Owners
	server   *gitserver.Server
	receiver *forge.Receiver
	client   atomic.Pointer[client.Client]
}

// New makes a Hub and its Git server under opts.Root.
func New(opts Options) (*Hub, error) {
	if opts.BaseURL == "" {
		return nil, errors.New("git hub: BaseURL is required")
	}
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if opts.Trigger == nil {
		opts.Trigger = RequestSync
	}
	h := &Hub{opts: opts, owners: gitserver.Owners{Default: opts.Namespace, Repos: opts.RepositoryNamespaces}}
	var err error
	hosts := opts.Hosts
	if u, err := url.Parse(opts.BaseURL); err == nil && u.Hostname() != "" {
		hosts = append(slices.Clone(hosts), u.Hostname())
	}
	h.server, err = gitserver.New(gitserver.Options{Root: opts.Root, OnPush: h.onPush, Log: opts.Log,
		Token: opts.Token, Hosts: hosts, AnyIPHost: opts.AnyIPHost, MaxPushBytes: opts.MaxPushBytes, LimitHint: opts.PushLimitHint})
	if err != nil {
		return nil, err
	}
	h.receiver, err = forge.NewReceiver(forge.Options{Secret: h.webhookSecret, OnEvent: h.onForgeEvent, RepoURL: h.webhookRepoURL})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// SetClient starts syncing: pushes and webhooks reach the API through c.
func (h *Hub) SetClient(c client.Client) { h.client.Store(&c) }

// Close stops delivering pushes.
func (h *Hub) Close() error { return h.server.Close() }

// Handler serves /git/ (push and fetch) and /hooks/ (forge webhooks).
func (h *Hub) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/git/", h.server)
	mux.Handle("/hooks/", h.receiver)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "knit: no repository for %s%s\n", r.Host, r.URL.Path)
	})
	return mux
}

// RepoURL is where the reconciler fetches repository name from.
func (h *Hub) RepoURL(name string) string { return h.opts.BaseURL + "/git/" + name + ".git" }

// onPush makes sure a GitRepository tracks a pushed repository (creating
// it on the first push) and asks for a sync at once.
func (h *Hub) onPush(ctx context.Context, p gitserver.Push) {
	c := h.client.Load()
	if c == nil {
		return // not started yet: the first poll will see the push
	}
	repo, err := h.ensureRepository(ctx, *c, p.Repo)
	if err != nil {
		h.opts.Log.Error(err, "Push not synced", "repository", p.Repo)
		return
	}
	h.opts.Log.Info("Push received; syncing", "repository", p.Repo, "updates", len(p.Updates))
	if err := h.opts.Trigger(ctx, *c, repo); err != nil {
		h.opts.Log.Error(err, "Sync not requested; the next poll will see the push", "repository", repo)
	}
}

// ensureRepository finds the GitRepository tracking the repository in the
// namespace owning it (gitserver.Owners), or creates one there. One in
// any other namespace is never the push's: whoever made it first for the
// same URL gets neither the push nor, from the controller, the code.
func (h *Hub) ensureRepository(ctx context.Context, c client.Client, name string) (types.NamespacedName, error) {
	ns := h.owners.Namespace(name)
	list := &knitv1alpha1.GitRepositoryList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return types.NamespacedName{}, fmt.Errorf("list GitRepositories in %s: %w", ns, err)
	}
	url := h.RepoURL(name)
	for _, r := range list.Items {
		if r.Namespace == ns && r.Spec.URL == url {
			return client.ObjectKeyFromObject(&r), nil
		}
	}
	repo := &knitv1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       knitv1alpha1.GitRepositorySpec{URL: url},
	}
	if err := c.Create(ctx, repo); err != nil && !apierrors.IsAlreadyExists(err) {
		return types.NamespacedName{}, fmt.Errorf("create GitRepository %s/%s: %w", ns, name, err)
	}
	h.opts.Log.Info("Tracking a new repository", "repository", name, "namespace", ns, "url", url)
	return client.ObjectKeyFromObject(repo), nil
}

// repoKey reads a webhook's repository as "name" (the hub's namespace) or
// "namespace/name".
func (h *Hub) repoKey(repo string) types.NamespacedName {
	if ns, name, ok := strings.Cut(repo, "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	return types.NamespacedName{Namespace: h.opts.Namespace, Name: repo}
}

// webhookSecret is the webhookSecret key of the GitRepository's Secret.
// A Secret that is missing or not labelled gitsource.CredentialsLabel
// counts as none: the receiver answers its deliveries as it answers a bad
// signature, and the log says why.
func (h *Hub) webhookSecret(ctx context.Context, repo string) ([]byte, error) {
	c := h.client.Load()
	if c == nil {
		return nil, errors.New("knit is starting")
	}
	gr := &knitv1alpha1.GitRepository{}
	if err := (*c).Get(ctx, h.repoKey(repo), gr); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, forge.ErrRepoNotFound
		}
		return nil, err
	}
	if gr.Spec.SecretRef == nil {
		return nil, nil
	}
	s := &corev1.Secret{}
	key := types.NamespacedName{Namespace: gr.Namespace, Name: gr.Spec.SecretRef.Name}
	if err := (*c).Get(ctx, key, s); err != nil {
		if apierrors.IsNotFound(err) {
			h.opts.Log.Info("Webhook refused: the repository's Secret does not exist", "repository", repo, "secret", key)
			return nil, nil
		}
		return nil, fmt.Errorf("webhook secret of %s: %w", repo, err)
	}
	if err := gitsource.CheckCredentialsSecret(s); err != nil {
		h.opts.Log.Info("Webhook refused: "+err.Error(), "repository", repo)
		return nil, nil
	}
	return s.Data[webhookSecretKey], nil
}

// webhookRepoURL is the URL of the GitRepository a webhook's <repo>
// names: the receiver refuses a payload for another repository.
func (h *Hub) webhookRepoURL(ctx context.Context, repo string) (string, error) {
	c := h.client.Load()
	if c == nil {
		return "", errors.New("knit is starting")
	}
	gr := &knitv1alpha1.GitRepository{}
	if err := (*c).Get(ctx, h.repoKey(repo), gr); err != nil {
		if apierrors.IsNotFound(err) {
			return "", forge.ErrRepoNotFound
		}
		return "", err
	}
	return gr.Spec.URL, nil
}

// onForgeEvent turns a verified webhook into a sync: a push fetches now,
// a pull request event becomes the PullRequest resource.
func (h *Hub) onForgeEvent(ctx context.Context, e forge.Event) error {
	c := h.client.Load()
	if c == nil {
		return errors.New("knit is starting; redeliver the webhook")
	}
	key := h.repoKey(e.Repo)
	if e.Kind == forge.KindPullRequest {
		if err := pullrequest.FromForge(ctx, *c, key, e); err != nil {
			return err
		}
	}
	return h.opts.Trigger(ctx, *c, key)
}
