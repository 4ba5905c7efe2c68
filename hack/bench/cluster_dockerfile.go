package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/internal/baseimages"
)

// The dockerfile:// subject on the cluster: examples/python-hello in a
// repository of its own on knit's Git server, built in a Job by rootless
// BuildKit (the dockerfile init container) and pushed to the node's
// registry; its base comes from that registry under docker.io's name
// (build.dockerfile.mirrors). It runs after the build part, so builds are
// on and the cache claim is there.
const (
	pyClusterRepo = "bench-python"
	pyClusterHost = pyRepo + "." + clusterNamespace + ".example.com" // the example's Service is python-hello
	// pyClusterTimeout bounds a push until its answer: the first build
	// pulls the base into an empty BuildKit cache on two shared cores.
	pyClusterTimeout = 5 * time.Minute
	// targetClusterDockerfileWarm is the bound on a warm code change's
	// push → serving on the test cluster: knit dev's plus the build Job's
	// pod start, the push to a registry and the node's pull.
	targetClusterDockerfileWarm = 8 * time.Second
)

// clusterDockerfileRun is one push → serving on the cluster, split by the
// build's record in status.builds.
type clusterDockerfileRun struct {
	// cached says BuildKit reused a layer: its log in the Job's
	// dockerfile container marks a step CACHED. Without a log to read
	// it is what the run's place and the claim imply.
	cached bool
	// total is git push's start → the new answer's first byte; job the
	// build Job's creation → its result read by the controller.
	total, job time.Duration
	// fetch, build and push are the builder's steps (status.builds'
	// durations); push is 0 when it reports none.
	fetch, build, push time.Duration
}

// rest is what is not the Job: the controller's fetch, render and apply
// before it, the new Revision's pull, start and the Route's switch after.
func (r clusterDockerfileRun) rest() time.Duration { return r.total - r.job }

// clusterDockerfileResult is the dockerfile:// part of the cluster
// section.
type clusterDockerfileResult struct {
	// skipped says why the part did not run; "" when it did.
	skipped string
	// claimKept says the build cache claim was there before the bench's
	// first build: BuildKit's cache may hold an earlier run's layers.
	claimKept bool
	basePush  time.Duration
	// runs are the first push, then the code changes.
	runs []clusterDockerfileRun
}

// warm is the code changes, the runs the target judges.
func (d *clusterDockerfileResult) warm() []clusterDockerfileRun {
	if d == nil || len(d.runs) < 2 {
		return nil
	}
	return d.runs[1:]
}

// measureClusterDockerfile pushes the python base to the node's registry,
// points builds' docker.io at it, then times the first push of
// examples/python-hello and changes of app.py's greeting, push → serving.
func (b *benchCluster) measureClusterDockerfile(ctx context.Context, root, ingress string, changes int) (*clusterDockerfileResult, error) {
	res := &clusterDockerfileResult{claimKept: b.claimKept}
	if _, err := baseimages.Dir(pyBase); err != nil {
		res.skipped = err.Error()
		fmt.Fprintf(b.progress, "cluster dockerfile: skipped: %s\n", res.skipped)
		return res, nil
	}
	began := time.Now()
	if err := pushBase(ctx, buildRegistry, name.Insecure); err != nil {
		return nil, err
	}
	res.basePush = time.Since(began)
	if err := b.run(ctx, "helm", "upgrade", "knit", "charts/knit", "-n", "knit-system", "--reuse-values", "--wait", "--timeout", "3m",
		"--set", "build.dockerfile.mirrors={docker.io="+buildRegistry+"}"); err != nil {
		return nil, err
	}
	c, err := b.knitClient()
	if err != nil {
		return nil, err
	}
	url, err := b.gitURL(ctx, c, pyClusterRepo)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "knit-bench-cluster-python-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	repo, app, err := newPythonRepo(ctx, root, tmp, url)
	if err != nil {
		return nil, err
	}
	err = c.Create(ctx, &knitv1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: clusterNamespace, Name: pyClusterRepo},
		Spec:       knitv1alpha1.GitRepositorySpec{URL: "http://knit-gitserver.knit-system.svc:8090/git/" + pyClusterRepo + ".git"},
	})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create the GitRepository: %w", err)
	}
	// Every push, the first too, says something of this run's own: a
	// build key seen before (the same tree pushed by an earlier bench run)
	// is the image the registry holds, not built again.
	stamp := time.Now().UTC().Format("0102-150405.000")
	for i := range changes + 1 {
		greeting := fmt.Sprintf("from Python, bench %s run %d!", stamp, i+1)
		if err := writeFile(filepath.Join(repo.dir, pyFile), strings.Replace(app, pyGreeting, greeting, 1)); err != nil {
			return nil, err
		}
		sha, err := commitAll(ctx, repo, fmt.Sprintf("Run %d", i+1))
		if err != nil {
			return nil, err
		}
		r, err := b.pushPython(ctx, c, repo, sha, "Hello GitOps "+greeting+"\n", ingress, i > 0 || res.claimKept)
		if err != nil {
			return nil, fmt.Errorf("dockerfile run %d: %w", i+1, err)
		}
		fmt.Fprintf(b.progress, "cluster dockerfile run %d (%s): push → serving %s (Job %s: fetch %s, build %s, push %s; rest %s)\n",
			i+1, cacheWord(r.cached), fmtSec(r.total), fmtSec(r.job), fmtSec(r.fetch), fmtSec(r.build), fmtSec(r.push), fmtSec(r.rest()))
		res.runs = append(res.runs, r)
	}
	return res, nil
}

// pushPython force-pushes commit sha (the Git server keeps an earlier
// run's history), times it until the ingress answers want, then splits
// it by the build's record; guess is the cache state to report when the
// build's log cannot be read.
func (b *benchCluster) pushPython(ctx context.Context, c client.Client, repo *fleetRepo, sha, want, ingress string, guess bool) (clusterDockerfileRun, error) {
	var r clusterDockerfileRun
	began := time.Now()
	if err := repo.git(ctx, "push", "--quiet", "--force", repo.remote, "main"); err != nil {
		return r, err
	}
	key := client.ObjectKey{Namespace: clusterNamespace, Name: pyClusterRepo}
	if err := waitBodyFrom(ctx, ingress, pyClusterHost, want, pyClusterTimeout); err != nil {
		gr := &knitv1alpha1.GitRepository{}
		_ = c.Get(ctx, key, gr)
		return r, fmt.Errorf("%w (GitRepository conditions %+v, builds %+v)", err, gr.Status.Conditions, gr.Status.Builds)
	}
	r.total = time.Since(began)
	st, err := succeededBuild(ctx, c, key, sha)
	if err != nil {
		return r, err
	}
	if st.StartTime == nil || st.CompletionTime == nil {
		return r, fmt.Errorf("the build of %.7s has no start or completion time: %+v", sha, st)
	}
	r.job = st.CompletionTime.Sub(st.StartTime.Time)
	if r.fetch, r.build, r.push, err = parseClusterDurations(st.Durations); err != nil {
		return r, fmt.Errorf("status.builds of %.7s: %w", sha, err)
	}
	r.cached = guess
	if log, err := b.buildLog(ctx, st.Job); err == nil {
		r.cached = strings.Contains(log, "CACHED")
	} else {
		fmt.Fprintf(b.progress, "cluster dockerfile: the log of %s: %v; the cache is reported as the run's place implies\n", st.Job, err)
	}
	return r, nil
}

// buildLog is the dockerfile container's log of the build Job job
// (namespace/name), where BuildKit's plain progress marks reused steps.
func (b *benchCluster) buildLog(ctx context.Context, job string) (string, error) {
	ns, name, ok := strings.Cut(job, "/")
	if !ok {
		return "", fmt.Errorf("job %q is not namespace/name", job)
	}
	pods, err := b.k.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + name})
	if err != nil {
		return "", err
	}
	if len(pods.Items) == 0 {
		return "", fmt.Errorf("no pod of job %s", job)
	}
	out, err := b.k.CoreV1().Pods(ns).GetLogs(pods.Items[0].Name, &corev1.PodLogOptions{Container: "dockerfile"}).DoRaw(ctx)
	return string(out), err
}

// parseClusterDurations reads status.builds' durations of a dockerfile://
// build Job, "fetch=0.11s build=1.76s push=0.23s": build is required
// (a ko:// build's compile= or a reused key's record is not one), fetch
// and push may be missing (0).
func parseClusterDurations(s string) (fetch, build, push time.Duration, err error) {
	seen := false
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || (k != "fetch" && k != "build" && k != "push") {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return 0, 0, 0, fmt.Errorf("durations %q: %s=%q is not a duration", s, k, v)
		}
		switch k {
		case "fetch":
			fetch = d
		case "build":
			build, seen = d, true
		default:
			push = d
		}
	}
	if !seen {
		return 0, 0, 0, fmt.Errorf("durations %q: no build=", s)
	}
	return fetch, build, push, nil
}

func cacheWord(cached bool) string {
	if cached {
		return "warm"
	}
	return "cold"
}

// clusterDockerfileSummary is the medians of the warm runs, each taken
// on its own.
type clusterDockerfileSummary struct{ total, job, fetch, build, push, rest time.Duration }

func (d *clusterDockerfileResult) warmSummary() clusterDockerfileSummary {
	w := d.warm()
	return clusterDockerfileSummary{
		total: median(w, func(r clusterDockerfileRun) time.Duration { return r.total }),
		job:   median(w, func(r clusterDockerfileRun) time.Duration { return r.job }),
		fetch: median(w, func(r clusterDockerfileRun) time.Duration { return r.fetch }),
		build: median(w, func(r clusterDockerfileRun) time.Duration { return r.build }),
		push:  median(w, func(r clusterDockerfileRun) time.Duration { return r.push }),
		rest:  median(w, clusterDockerfileRun.rest),
	}
}

// clusterDockerfileMarkdown is the dockerfile:// table of the cluster
// section; "" when the part was not run.
func clusterDockerfileMarkdown(d *clusterDockerfileResult) string {
	if d == nil {
		return ""
	}
	var s strings.Builder
	fmt.Fprintf(&s, "\n### Push code → serving: dockerfile:// built in the cluster\n\n")
	if d.skipped != "" {
		fmt.Fprintf(&s, "Not measured: %s.\n", d.skipped)
		return s.String()
	}
	fmt.Fprintf(&s, "`%s` (a Dockerfile beside `%s`, `image: dockerfile://./`) in a repository of its own on\n", pyApp, pyFile)
	fmt.Fprintf(&s, "knit's Git server, with builds on as above and `build.dockerfile.mirrors` pointing docker.io at the\n")
	fmt.Fprintf(&s, "node's registry, which holds the `python:3.11-slim` `make base-images` built (pushed in %s).\n", d.basePush.Round(100*time.Millisecond))
	fmt.Fprintf(&s, "The build Job runs rootless BuildKit in its `dockerfile` container, its layer cache on the cache\n")
	fmt.Fprintf(&s, "claim, then pushes the image to the node's registry. Each run changes the greeting in `%s`\n", pyFile)
	fmt.Fprintf(&s, "(so no build key repeats an earlier run's), commits, pushes and times push → the new answer\n")
	fmt.Fprintf(&s, "through the ingress. *cache* is what the build's log says: warm when BuildKit marked a step\n")
	fmt.Fprintf(&s, "CACHED. *Job*, fetch, build, push and *rest* are as in the ko:// table (`build=` BuildKit's\n")
	fmt.Fprintf(&s, "build, `push=` the image's push). ")
	if d.claimKept {
		fmt.Fprintf(&s, "The cache claim was kept from an earlier run, so run 1 may start warm.\n")
	} else {
		fmt.Fprintf(&s, "The cache claim was new, so run 1 starts with an empty BuildKit cache.\n")
	}
	fmt.Fprintf(&s, "Target: a warm code change push → serving < %s on this cluster (median of runs 2 on, the code changes).\n\n", fmtSec(targetClusterDockerfileWarm))
	fmt.Fprintf(&s, "| run | cache | push → serving | Job | fetch | build | push | rest |\n")
	fmt.Fprintf(&s, "|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for i, r := range d.runs {
		fmt.Fprintf(&s, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", i+1, cacheWord(r.cached), fmtSec(r.total), fmtSec(r.job),
			fmtSec(r.fetch), fmtSec(r.build), fmtSec(r.push), fmtSec(r.rest()))
	}
	if len(d.warm()) > 0 {
		m := d.warmSummary()
		fmt.Fprintf(&s, "| **median, warm** | | **%s** | **%s** | **%s** | **%s** | **%s** | **%s** |\n",
			fmtSec(m.total), fmtSec(m.job), fmtSec(m.fetch), fmtSec(m.build), fmtSec(m.push), fmtSec(m.rest))
	}
	return s.String()
}

// clusterDockerfileTarget judges the code changes' median push → serving
// on the cluster.
func (r *report) clusterDockerfileTarget() target {
	t := target{what: fmt.Sprintf("a code change of a dockerfile:// Service on the test cluster, built in a Job by rootless BuildKit, its cache warm: push → serving < %s (median)", fmtSec(targetClusterDockerfileWarm)), verdict: verdict(false, false)}
	if r.cluster == nil {
		return t
	}
	if d := r.cluster.dockerfile; len(d.warm()) > 0 {
		m := d.warmSummary()
		t.measured = fmt.Sprintf("%s (Job %s, of it build %s; rest %s)", fmtSec(m.total), fmtSec(m.job), fmtSec(m.build), fmtSec(m.rest))
		t.verdict = verdict(true, m.total < targetClusterDockerfileWarm)
	}
	return t
}
