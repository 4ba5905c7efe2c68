package dev

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/forge"
	"github.com/knitops/knit/gitsync/gitserver"
	"github.com/knitops/knit/gitsync/plan"
	"github.com/knitops/knit/gitsync/pullrequest"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// pushNamespace is where a repository created by a first push to knit's
// Git server deploys.
const pushNamespace = "default"

// webhookSecretKey is the key of a GitRepository's Secret holding the
// forge webhook secret.
const webhookSecretKey = "webhookSecret"

// gitPlane is everything knit dev serves on --git-addr and the Git path
// behind it: the smart-HTTP Git server, the forge webhook receivers, the
// fetch cache and the checkouts ko:// images build from.
type gitPlane struct {
	baseURL  string // http://<git-addr>
	server   *gitserver.Server
	receiver *forge.Receiver
	cache    *gitsource.Cache
	srcRoot  string
	triggers chan event.GenericEvent
	client   atomic.Pointer[client.Client] // set once the API answers
	log      logr.Logger
}

func newGitPlane(stateDir, baseURL string, log logr.Logger) (*gitPlane, error) {
	g := &gitPlane{
		baseURL:  baseURL,
		cache:    &gitsource.Cache{Dir: filepath.Join(stateDir, "git-cache")},
		srcRoot:  filepath.Join(stateDir, "src"),
		triggers: make(chan event.GenericEvent, 64),
		log:      log.WithName("git"),
	}
	var err error
	g.server, err = gitserver.New(gitserver.Options{Root: filepath.Join(stateDir, "git"), OnPush: g.onPush, Log: g.log})
	if err != nil {
		return nil, err
	}
	g.receiver, err = forge.NewReceiver(forge.Options{Secret: g.webhookSecret, OnEvent: g.onForgeEvent})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// Handler serves /git/ (push and fetch) and /hooks/ (forge webhooks).
func (g *gitPlane) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/git/", g.server)
	mux.Handle("/hooks/", g.receiver)
	mux.Handle("/", noRoutes("repository"))
	return mux
}

func (g *gitPlane) repoURL(name string) string { return g.baseURL + "/git/" + name + ".git" }

// onPush makes sure a GitRepository tracks a pushed repository (creating
// default/<name> on the first push) and syncs it at once.
func (g *gitPlane) onPush(ctx context.Context, p gitserver.Push) {
	c := g.client.Load()
	if c == nil {
		return // not started yet: the first poll will see the push
	}
	repo, err := g.ensureRepository(ctx, *c, p.Repo)
	if err != nil {
		g.log.Error(err, "Push not synced", "repository", p.Repo)
		return
	}
	g.log.Info("Push received; syncing", "repository", p.Repo, "updates", len(p.Updates))
	g.trigger(repo)
}

func (g *gitPlane) ensureRepository(ctx context.Context, c client.Client, name string) (types.NamespacedName, error) {
	list := &knitv1alpha1.GitRepositoryList{}
	if err := c.List(ctx, list); err != nil {
		return types.NamespacedName{}, fmt.Errorf("list GitRepositories: %w", err)
	}
	url := g.repoURL(name)
	for _, r := range list.Items {
		if r.Spec.URL == url {
			return client.ObjectKeyFromObject(&r), nil
		}
	}
	repo := &knitv1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: pushNamespace, Name: name},
		Spec:       knitv1alpha1.GitRepositorySpec{URL: url},
	}
	if err := c.Create(ctx, repo); err != nil && !apierrors.IsAlreadyExists(err) {
		return types.NamespacedName{}, fmt.Errorf("create GitRepository %s/%s: %w", pushNamespace, name, err)
	}
	g.log.Info("Tracking a new repository", "repository", name, "url", url)
	return client.ObjectKeyFromObject(repo), nil
}

func (g *gitPlane) trigger(key types.NamespacedName) {
	obj := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	select {
	case g.triggers <- event.GenericEvent{Object: obj}:
	default: // a burst of pushes: the queued trigger covers this one too
	}
}

// repoKey reads a webhook's repository as "name" (default namespace) or
// "namespace/name".
func repoKey(repo string) types.NamespacedName {
	if ns, name, ok := strings.Cut(repo, "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	return types.NamespacedName{Namespace: pushNamespace, Name: repo}
}

// webhookSecret is the webhookSecret key of the GitRepository's Secret.
func (g *gitPlane) webhookSecret(ctx context.Context, repo string) ([]byte, error) {
	c := g.client.Load()
	if c == nil {
		return nil, errors.New("knit is starting")
	}
	gr := &knitv1alpha1.GitRepository{}
	if err := (*c).Get(ctx, repoKey(repo), gr); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, forge.ErrRepoNotFound
		}
		return nil, err
	}
	if gr.Spec.SecretRef == nil {
		return nil, nil
	}
	s := &corev1.Secret{}
	if err := (*c).Get(ctx, types.NamespacedName{Namespace: gr.Namespace, Name: gr.Spec.SecretRef.Name}, s); err != nil {
		return nil, fmt.Errorf("webhook secret of %s: %w", repo, err)
	}
	return s.Data[webhookSecretKey], nil
}

// onForgeEvent turns a verified webhook into a sync: a push fetches now,
// a pull request event becomes the PullRequest resource.
func (g *gitPlane) onForgeEvent(ctx context.Context, e forge.Event) error {
	c := g.client.Load()
	if c == nil {
		return errors.New("knit is starting; redeliver the webhook")
	}
	key := repoKey(e.Repo)
	if e.Kind == forge.KindPullRequest {
		if err := pullrequest.FromForge(ctx, *c, key, e); err != nil {
			return err
		}
	}
	g.trigger(key)
	return nil
}

// sourceDir answers the local runtime: a Revision deployed from Git builds
// from the checkout of its commit.
func (g *gitPlane) sourceDir(_ context.Context, namespace string, labels, annotations map[string]string) (string, error) {
	repo, sha := labels[plan.RepositoryLabel], annotations[plan.CommitAnnotation]
	if repo == "" || sha == "" {
		return "", nil
	}
	return g.cache.Checkout(namespace+"/"+repo, sha, filepath.Join(g.srcRoot, namespace, repo))
}
