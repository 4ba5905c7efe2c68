//go:build !unit

package gitrepository

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/knitops/knit/api"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/canary"
	"github.com/knitops/knit/gitsync/plan"
	gitsource "github.com/knitops/knit/gitsync/source"
	"github.com/knitops/knit/internal/poll"
	"github.com/knitops/knit/internal/testapi"
)

var (
	k8s       client.Client
	announced = &recorder{}
	forges    = &fakeForges{}
	served    = &fakeMetrics{counts: map[string]int{}, served: map[string]func(int) canary.Snapshot{}}
	triggers  = make(chan event.GenericEvent, 16)
	passes    = &passLog{}
	// mgr and options are the suite's manager and its reconciler's
	// options, for a test that starts another reconciler (a restart).
	mgr     ctrl.Manager
	options Options
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	flag.Parse()
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	cfg, stop, err := testapi.Start(filepath.Join("..", "..", "charts", "knit", "crds"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	scheme, err := api.NewScheme()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mgr, err = ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cacheDir, err := os.MkdirTemp("", "knit-gitsync-cache")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(cacheDir)
	cache := &gitsource.Cache{Dir: cacheDir, Egress: localDirs, MaxFetchBytes: maxFetchBytes, LimitHint: limitHint}
	identity := Identity{DefaultServiceAccount: defaultServiceAccount, AllowedKinds: append(slices.Clone(plan.DefaultAllowedKinds), "ServiceAccount")}
	options = Options{Cache: cache, Announcer: announced, Triggers: triggers, Identity: identity, Forges: forges.client, Metrics: served.read}
	r := newReconciler(mgr, &options)
	r.passed = passes.record
	if err := r.setup(mgr, options); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := k8s.Create(context.Background(), gitopsRole); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return m.Run()
}

// recorder keeps the sync failures and rollbacks the reconciler
// announced.
type recorder struct {
	mu        sync.Mutex
	failed    []string // "<repo> <sha>: <err>"
	rollbacks []knitv1alpha1.RolloutStatus
}

func (r *recorder) RolloutFailed(_ context.Context, repo *knitv1alpha1.GitRepository, ro knitv1alpha1.RolloutStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rollbacks = append(r.rollbacks, ro)
}

func (r *recorder) SyncFailed(_ context.Context, repo *knitv1alpha1.GitRepository, c plan.Commit, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, fmt.Sprintf("%s %s: %v", repo.Name, c.SHA, err))
}

func (r *recorder) about(repo string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, f := range r.failed {
		if strings.HasPrefix(f, repo+" ") {
			out = append(out, f)
		}
	}
	return out
}

// passLog keeps, per repository, the pull requests its last finished
// pass read.
type passLog struct {
	mu   sync.Mutex
	last map[types.NamespacedName][]knitv1alpha1.PullRequest
}

func (l *passLog) record(repo *knitv1alpha1.GitRepository, prs []knitv1alpha1.PullRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[types.NamespacedName][]knitv1alpha1.PullRequest{}
	}
	l.last[client.ObjectKeyFromObject(repo)] = prs
}

// read is what the last finished pass of key read of pull request name.
func (l *passLog) read(key types.NamespacedName, name string) (knitv1alpha1.PullRequest, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, pr := range l.last[key] {
		if pr.Name == name {
			return pr, true
		}
	}
	return knitv1alpha1.PullRequest{}, false
}

// gitRepo is an app repository driven with the real git CLI.
type gitRepo struct {
	t   *testing.T
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	g := &gitRepo{t: t, dir: t.TempDir()}
	g.git("init", "-q", "-b", "main")
	return g
}

func (g *gitRepo) git(args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+g.dir, "GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files (an empty content deletes the file) and commits.
func (g *gitRepo) commit(msg string, files map[string]string) string {
	g.t.Helper()
	g.stage(files)
	g.git("commit", "-qm", msg, "--allow-empty")
	return g.git("rev-parse", "HEAD")
}

// stage writes files (an empty content deletes the file) and adds them
// to the index.
func (g *gitRepo) stage(files map[string]string) {
	g.t.Helper()
	for name, content := range files {
		path := filepath.Join(g.dir, name)
		if content == "" {
			g.git("rm", "-q", name)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			g.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			g.t.Fatal(err)
		}
	}
	g.git("add", "-A")
}

// defaultServiceAccount is what the suite's syncs write as when their
// GitRepository names no ServiceAccount, as the chart configures.
const defaultServiceAccount = "knit-gitops"

// gitopsRole is what newNamespace grants the default ServiceAccount: what
// the suite's commits deploy, as an operator's knit-gitops ClusterRole
// would.
var gitopsRole = &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "knit-gitops"}, Rules: []rbacv1.PolicyRule{
	{APIGroups: []string{"serving.knative.dev"}, Resources: []string{"services", "configurations", "routes", "revisions"},
		Verbs: []string{"get", "create", "patch", "update", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps", "serviceaccounts"}, Verbs: []string{"get", "create", "patch", "update", "delete"}},
	{APIGroups: []string{"knit.dev"}, Resources: []string{"eventsinks"}, Verbs: []string{"get", "create", "patch", "update", "delete"}},
}}

// newNamespace makes a namespace for one test, whose default GitOps
// ServiceAccount may deploy what the suite's commits hold.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := newBareNamespace(t)
	for _, o := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: defaultServiceAccount}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: defaultServiceAccount},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: gitopsRole.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: defaultServiceAccount}}},
	} {
		if err := k8s.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	return ns
}

// newBareNamespace makes a namespace in which nobody was granted anything.
func newBareNamespace(t *testing.T) string {
	t.Helper()
	ns := "git-" + rand.String(5)
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// trigger wakes the repository at once, as a push to knit's Git server does.
func trigger(ns, name string) {
	repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	triggers <- event.GenericEvent{Object: repo}
}

// eventually polls cond until it holds or 30 s pass.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	poll.Until(t, what, 50*time.Millisecond, 30*time.Second, cond)
}
