package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/hub"
	"github.com/knitops/knit/internal/kofixture"
)

// The build part: a repository whose Service runs ko://./cmd/hello
// pushed to knit's Git server on the cluster, built in a Job, pushed to
// the node's registry and rolled out (values build.*). The first push
// builds cold (empty module and build caches), the next ones are code
// changes with the caches warm.
const (
	buildRegistry = "10.250.0.2:5000" // make cluster's registry, on the node
	buildHostIP   = "10.250.0.1"      // the host's end of the node's veth: the module proxy
	buildRepo     = "bench-build"
	buildService  = "built"
)

// buildRun is one push → serving, split.
type buildRun struct {
	warm                   bool
	total, job             time.Duration // push → first right answer; the Job's start → result read
	fetch, compile, pushed string        // the builder's steps
	downloads              int64         // requests to the module proxy during the run
}

// measureBuilds turns builds on and times runs pushes (the first cold).
func (b *benchCluster) measureBuilds(ctx context.Context, ingress string, runs int) ([]buildRun, error) {
	tmp, err := os.MkdirTemp("", "knit-bench-build")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	proxy, err := kofixture.StartModuleProxy(net.JoinHostPort(buildHostIP, "0"), tmp)
	if err != nil {
		return nil, err
	}
	defer proxy.Close()
	// The caches' claim outlives knit: a cluster kept from an earlier run
	// starts warm, and the table says so.
	_, err = b.k.CoreV1().PersistentVolumeClaims("knit-system").Get(ctx, "knit-build-cache", metav1.GetOptions{})
	coldCache := apierrors.IsNotFound(err)
	b.claimKept = !coldCache
	if err := b.run(ctx, "helm", "upgrade", "knit", "charts/knit", "-n", "knit-system", "--reuse-values", "--wait", "--timeout", "3m",
		"--set", "build.registry="+buildRegistry, "--set", "build.insecure=true", "--set", "build.cache.size=1Gi",
		"--set", "build.goproxy="+proxy.URL, "--set", "gitserver.deployNamespace="+clusterNamespace); err != nil {
		return nil, err
	}
	c, err := b.knitClient()
	if err != nil {
		return nil, err
	}
	url, err := b.gitURL(ctx, c, buildRepo)
	if err != nil {
		return nil, err
	}
	dir := tmp + "/repo"
	git := gitIn(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if _, err := git("init", "-q", "-b", "main"); err != nil {
		return nil, err
	}
	if err := kofixture.WriteNonce(dir, time.Now().Format(time.RFC3339Nano)); err != nil {
		return nil, err
	}
	if err := b.gitopsAccount(ctx); err != nil {
		return nil, err
	}
	if err := c.Create(ctx, &knitv1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: clusterNamespace, Name: buildRepo},
		Spec:       knitv1alpha1.GitRepositorySpec{URL: "http://knit-gitserver.knit-system.svc:8090/git/" + buildRepo + ".git"},
	}); err != nil {
		return nil, fmt.Errorf("create the GitRepository: %w", err)
	}
	var out []buildRun
	for i := range runs {
		greeting := "v" + strconv.Itoa(i+1)
		if err := kofixture.WriteApp(dir, buildService, greeting, false); err != nil {
			return nil, err
		}
		before := proxy.Requests()
		r, err := b.pushBuild(ctx, c, git, url, greeting, ingress)
		if err != nil {
			return nil, fmt.Errorf("build run %d: %w", i+1, err)
		}
		r.warm, r.downloads = i > 0 || !coldCache, proxy.Requests()-before
		fmt.Fprintf(b.progress, "build run %d: push → serving %s (Job %s: fetch %s, compile %s, push %s; %d module downloads)\n",
			i+1, r.total.Round(10*time.Millisecond), r.job.Round(10*time.Millisecond), r.fetch, r.compile, r.pushed, r.downloads)
		out = append(out, r)
	}
	return out, nil
}

// gitopsAccount gives the bench's namespace the ServiceAccount a
// GitRepository naming none writes as (the controller's default GitOps
// ServiceAccount, knit-gitops), bound to the chart's knit-gitops
// ClusterRole: without it every apply of the bench's repositories is
// forbidden.
func (b *benchCluster) gitopsAccount(ctx context.Context) error {
	const name = "knit-gitops"
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: clusterNamespace, Name: name}}
	if _, err := b.k.CoreV1().ServiceAccounts(clusterNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: clusterNamespace, Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: clusterNamespace, Name: name}}}
	if _, err := b.k.RbacV1().RoleBindings(clusterNamespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// pushBuild commits and pushes the work tree, then waits until the app
// answers with its greeting and reads the build's record.
func (b *benchCluster) pushBuild(ctx context.Context, c client.Client, git func(...string) (string, error), url, greeting, ingress string) (buildRun, error) {
	if _, err := git("add", "."); err != nil {
		return buildRun{}, err
	}
	if _, err := git("commit", "-qm", greeting); err != nil {
		return buildRun{}, err
	}
	sha, err := git("rev-parse", "HEAD")
	if err != nil {
		return buildRun{}, err
	}
	began := time.Now()
	if _, err := git("push", "-q", "--force", url, "main"); err != nil {
		return buildRun{}, err
	}
	host := buildService + "." + clusterNamespace + ".example.com"
	if err := waitBodyFrom(ctx, ingress, host, kofixture.Answer(greeting)+"\n", 5*time.Minute); err != nil {
		repo := &knitv1alpha1.GitRepository{}
		_ = c.Get(ctx, client.ObjectKey{Namespace: clusterNamespace, Name: buildRepo}, repo)
		return buildRun{}, fmt.Errorf("%w (GitRepository conditions %+v, builds %+v)", err, repo.Status.Conditions, repo.Status.Builds)
	}
	r := buildRun{total: time.Since(began)}
	repo := &knitv1alpha1.GitRepository{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: clusterNamespace, Name: buildRepo}, repo); err != nil {
		return buildRun{}, err
	}
	for _, st := range repo.Status.Builds {
		if st.Commit == sha && st.Phase == knitv1alpha1.BuildSucceeded {
			r.job = st.CompletionTime.Sub(st.StartTime.Time)
			r.fetch, r.compile, r.pushed = step(st.Durations, "fetch"), step(st.Durations, "compile"), step(st.Durations, "push")
			return r, nil
		}
	}
	return buildRun{}, fmt.Errorf("no successful build of %.7s in %+v", sha, repo.Status.Builds)
}

// step is one step's duration out of status.builds' "fetch=… compile=…".
func step(durations, name string) string {
	for f := range strings.FieldsSeq(durations) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return v
		}
	}
	return "–"
}

func (b *benchCluster) knitClient() (client.Client, error) { return knitClient(b.kubeconfig) }

// gitURL is the repository repo on knit's Git server, through its
// ClusterIP (the host routes the service CIDR to the node), with the
// server's token as the password.
func (b *benchCluster) gitURL(ctx context.Context, c client.Client, repo string) (string, error) {
	svc, err := b.k.CoreV1().Services("knit-system").Get(ctx, "knit-gitserver", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	secret := hub.TokenSecret{Reader: c, Key: client.ObjectKey{Namespace: "knit-system", Name: hub.DefaultTokenSecret}}
	token, err := secret.Token(ctx)
	if err != nil {
		return "", err
	}
	addr := net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(svc.Spec.Ports[0].Port)))
	return "http://knit:" + token + "@" + addr + "/git/" + repo + ".git", nil
}

// gitIn runs git in dir as a user with no global configuration.
func gitIn(dir string) func(args ...string) (string, error) {
	return func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Bench", "GIT_AUTHOR_EMAIL=bench@example.com",
			"GIT_COMMITTER_NAME=Bench", "GIT_COMMITTER_EMAIL=bench@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out)), nil
	}
}

// buildsMarkdown is the builds' table.
func buildsMarkdown(runs []buildRun) string {
	if len(runs) == 0 {
		return ""
	}
	var s strings.Builder
	fmt.Fprintf(&s, "\n### Push code → serving: ko:// built in the cluster\n\n")
	fmt.Fprintf(&s, "`build.registry` set to the node's registry (plain HTTP), `build.goproxy` a proxy on the host\n")
	fmt.Fprintf(&s, "serving the app's one dependency. Each run commits a code change to a repository whose Service runs\n")
	fmt.Fprintf(&s, "`ko://./cmd/hello`, pushes it to knit's Git server and times push → the new answer through the\n")
	fmt.Fprintf(&s, "ingress. *Job* is the build Job's creation → its result read by the controller; fetch, compile and\n")
	fmt.Fprintf(&s, "push are the builder's own steps; *rest* is push → serving minus the Job (the controller's fetch,\n")
	fmt.Fprintf(&s, "render, apply and the revision's rollout). Run 1 starts with empty caches.\n\n")
	fmt.Fprintf(&s, "| run | caches | push → serving | Job | fetch | compile | push | rest | module downloads |\n")
	fmt.Fprintf(&s, "|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, r := range runs {
		caches := "cold"
		if r.warm {
			caches = "warm"
		}
		fmt.Fprintf(&s, "| %d | %s | %s | %s | %s | %s | %s | %s | %d |\n", i+1, caches, fmtSec(r.total), fmtSec(r.job),
			r.fetch, r.compile, r.pushed, fmtSec(r.total-r.job), r.downloads)
	}
	if len(runs) > 1 {
		warm := runs[1:]
		total, job := median(warm, func(r buildRun) time.Duration { return r.total }), median(warm, func(r buildRun) time.Duration { return r.job })
		fmt.Fprintf(&s, "| **median, warm** | | **%s** | **%s** | | | | **%s** | |\n", fmtSec(total), fmtSec(job), fmtSec(total-job))
	}
	return s.String()
}

func fmtSec(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
