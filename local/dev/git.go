package dev

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/gitrepository"
	"github.com/knitops/knit/gitsync/gitserver"
	"github.com/knitops/knit/gitsync/hub"
	"github.com/knitops/knit/gitsync/plan"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// gitPlane is knit dev's Git path: the hub on --git-addr (push, fetch,
// forge webhooks), the fetch cache, and the checkouts ko:// images build
// from. A push wakes the reconciler in process, through triggers.
type gitPlane struct {
	*hub.Hub
	baseURL  string
	token    string // every push and fetch needs it (loadGitToken)
	cache    *gitsource.Cache
	srcRoot  string
	triggers chan event.GenericEvent
}

// newGitPlane starts the Git path; the Git server answers for the
// loopback names only, and to the holder of the state directory's token.
// Pushes and fetches are bounded by opts' Git limits.
func newGitPlane(opts Options, baseURL string, log logr.Logger) (*gitPlane, error) {
	stateDir := opts.StateDir
	token, err := loadGitToken(stateDir)
	if err != nil {
		return nil, err
	}
	g := &gitPlane{
		baseURL: baseURL,
		token:   token,
		cache: &gitsource.Cache{Dir: filepath.Join(stateDir, "git-cache"), MaxFetchBytes: opts.GitMaxFetchBytes,
			LimitHint: "restart knit dev with a higher --git-max-fetch-size"},
		srcRoot:  filepath.Join(stateDir, "src"),
		triggers: make(chan event.GenericEvent, 64),
	}
	g.Hub, err = hub.New(hub.Options{Root: filepath.Join(stateDir, "git"), BaseURL: baseURL, Token: gitserver.StaticToken(token),
		Trigger: g.trigger, Log: log.WithName("git"),
		MaxPushBytes: opts.GitMaxPushBytes, PushLimitHint: "restart knit dev with a higher --git-max-push-size"})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// server is the Git server as the GitRepository reconciler fetches from
// it: in process, the token never leaves memory.
func (g *gitPlane) server() *gitrepository.GitServer {
	return &gitrepository.GitServer{URL: g.baseURL, Token: gitserver.StaticToken(g.token)}
}

func (g *gitPlane) trigger(_ context.Context, _ client.Client, key types.NamespacedName) error {
	obj := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	select {
	case g.triggers <- event.GenericEvent{Object: obj}:
	default: // a burst of pushes: the queued trigger covers this one too
	}
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

// retain is the fetch cache's Cache.Retain in knit dev: the commits of a
// repository's Revisions that are not checked out yet, which their first
// replica will check out of the cache (sourceDir). A checked-out commit
// needs the cache no more: its checkout stays while its Revision does
// (checkoutGC).
func (g *gitPlane) retain(reader client.Reader) func(ctx context.Context, key string) ([]string, error) {
	return func(ctx context.Context, key string) ([]string, error) {
		namespace, repo, _ := strings.Cut(key, "/")
		revs := &servingv1.RevisionList{}
		if err := reader.List(ctx, revs, client.InNamespace(namespace), client.MatchingLabels{plan.RepositoryLabel: repo}); err != nil {
			return nil, fmt.Errorf("list Revisions of repository %s: %w", key, err)
		}
		return notCheckedOut(revs.Items, filepath.Join(g.srcRoot, namespace, repo)), nil
	}
}

// notCheckedOut lists the commits of revs with no checkout under dir.
func notCheckedOut(revs []servingv1.Revision, dir string) []string {
	var out []string
	for _, r := range revs {
		sha := r.Annotations[plan.CommitAnnotation]
		if sha == "" || strings.ContainsAny(sha, `/\.`) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, sha)); err == nil {
			continue
		}
		out = append(out, sha)
	}
	return out
}
