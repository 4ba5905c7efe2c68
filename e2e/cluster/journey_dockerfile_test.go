//go:build cluster

package cluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/internal/baseimages"
)

// pythonRepo is the Python example's repository on knit's Git server.
const pythonRepo = "python-hello"

// buildDockerfile deploys the Python example by git push: its Dockerfile
// is built by rootless BuildKit in a build Job, the image pushed to the
// registry and pulled from there by the node, by digest. A code change
// rebuilds from BuildKit's layer cache on the claim; a broken RUN step
// says what failed and the last good revision serves. The base comes
// from the test registry under docker.io's name (build.dockerfile.mirrors),
// made by make base-images from Debian's packages.
func (j *journey) buildDockerfile(t *testing.T) {
	ctx := context.Background()
	base, err := baseimages.Dir("python")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := baseimages.Push(ctx, base, registry+"/library/python:3.11-slim", name.Insecure); err != nil {
		t.Fatal(err)
	}
	j.must("helm", "upgrade", "knit", "charts/knit", "-n", systemNamespace, "--reuse-values", "--wait", "--timeout", "3m",
		"--set", "build.dockerfile.mirrors={docker.io="+registry+"}")
	t.Cleanup(func() {
		_ = j.c.DeleteAllOf(context.Background(), &batchv1.Job{}, client.InNamespace(systemNamespace),
			client.MatchingLabels{"knit.dev/repository": pythonRepo}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	})
	dir := filepath.Join(t.TempDir(), pythonRepo)
	j.copyExample(filepath.Join(j.root, "examples", pythonRepo), dir)
	git := j.gitIn(dir)
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-qm", "Hello, Python")

	_, image1, _ := j.pushDockerfile(git, "Hello GitOps from Python!")
	if !strings.HasPrefix(image1, registry+"/"+ns+"/"+pythonRepo+"/"+pythonRepo+"@sha256:") {
		t.Fatalf("the Service runs %q, want the build's image in %s by digest", image1, registry)
	}

	// A code change: a new digest; the base and WORKDIR come from
	// BuildKit's cache, kept on the claim between build pods.
	app := filepath.Join(dir, "app.py")
	b, err := os.ReadFile(app)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(app, []byte(strings.Replace(string(b), "from Python!", "from Python, again!", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	git("commit", "-qam", "Say it again")
	sha2, image2, logs := j.pushDockerfile(git, "Hello GitOps from Python, again!")
	if image2 == image1 {
		t.Errorf("a code change kept the image %s", image1)
	}
	if !strings.Contains(logs, "WORKDIR /app") || !strings.Contains(logs, "CACHED") {
		t.Errorf("the build of %.7s hit no BuildKit cache; its log:\n%s", sha2, logs)
	}

	// A RUN step that fails: its words on the GitRepository, the last
	// good revision serves.
	df := filepath.Join(dir, "Dockerfile")
	good, err := os.ReadFile(df)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(df, []byte(strings.Replace(string(good), "COPY app.py .\n", "COPY app.py .\nRUN python3 -c 'import knit_missing_module'\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	git("commit", "-qam", "Import what is not there")
	git("push", "-q", j.gitRepoURL(pythonRepo), "main")
	broken := git("rev-parse", "HEAD")
	j.waitFor("the failed RUN step reported", 3*time.Minute, func(ctx context.Context) (bool, string) {
		repo := &knitv1alpha1.GitRepository{}
		if err := j.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: pythonRepo}, repo); err != nil {
			return false, err.Error()
		}
		synced := repo.Status.GetCondition(knitv1alpha1.GitRepositoryConditionSynced)
		return synced.IsFalse() && strings.Contains(synced.Message, broken[:7]) &&
			strings.Contains(synced.Message, "No module named 'knit_missing_module'"), fmt.Sprintf("Synced: %+v", synced)
	})
	if code, body, err := j.get(j.ingress, j.host(pythonRepo)); err != nil || code != http.StatusOK || body != "Hello GitOps from Python, again!" {
		t.Errorf("after the failed build %s answers %d %q %v, want the last good revision", pythonRepo, code, body, err)
	}
	j.allowedHosts(t, git, dir, string(good))
}

// allowedHosts: with build.dockerfile.allowHosts, a RUN step fetches
// from the allowed host through the build's proxy, cannot reach it
// around the proxy, and a host not on the list is refused with words
// that say how to allow it.
func (j *journey) allowedHosts(t *testing.T, git func(...string) string, dir, good string) {
	allowed := serveOn(t, net.JoinHostPort(hostIP, "0"), "knit-package-1.0")
	refused := serveOn(t, net.JoinHostPort(hostIP, "0"), "never")
	j.must("helm", "upgrade", "knit", "charts/knit", "-n", systemNamespace, "--reuse-values", "--wait", "--timeout", "3m",
		"--set", "build.dockerfile.allowHosts={"+allowed+"}")
	if err := os.WriteFile(filepath.Join(dir, "probe.py"), []byte(probePy), 0o644); err != nil {
		t.Fatal(err)
	}
	df := filepath.Join(dir, "Dockerfile")
	write := func(steps ...string) {
		extra := "COPY probe.py .\n"
		for _, s := range steps {
			extra += "RUN python3 probe.py " + s + "\n"
		}
		if err := os.WriteFile(df, []byte(strings.Replace(good, "COPY app.py .\n", "COPY app.py .\n"+extra, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("http://"+allowed+"/pkg proxy", "http://"+allowed+"/pkg direct")
	git("add", ".")
	git("commit", "-qam", "Fetch a package through the build proxy")
	_, _, logs := j.pushDockerfile(git, "Hello GitOps from Python, again!")
	for _, want := range []string{"fetched knit-package-1.0", "direct refused:"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the build's log does not say %q:\n%s", want, logs)
		}
	}
	write("http://" + refused + "/pkg proxy")
	git("commit", "-qam", "Fetch from a host not allowed")
	git("push", "-q", j.gitRepoURL(pythonRepo), "main")
	sha := git("rev-parse", "HEAD")
	j.waitFor("the refused host reported", 3*time.Minute, func(ctx context.Context) (bool, string) {
		repo := &knitv1alpha1.GitRepository{}
		if err := j.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: pythonRepo}, repo); err != nil {
			return false, err.Error()
		}
		synced := repo.Status.GetCondition(knitv1alpha1.GitRepositoryConditionSynced)
		return synced.IsFalse() && strings.Contains(synced.Message, sha[:7]) &&
				strings.Contains(synced.Message, refused+" is not allowed") && strings.Contains(synced.Message, "build.dockerfile.allowHosts"),
			fmt.Sprintf("Synced: %+v", synced)
	})
}

// probePy fetches a URL in a RUN step through the proxy the step's
// environment names, or around it, which must fail.
const probePy = `import sys, urllib.request as u
url, how = sys.argv[1], sys.argv[2]
if how == "proxy":
    print("fetched", u.urlopen(url, timeout=10).read().decode())
else:
    try:
        u.build_opener(u.ProxyHandler({})).open(url, timeout=3)
    except OSError as e:
        print("direct refused:", e)
    else:
        sys.exit("reached " + url + " around the proxy")
`

// serveOn serves body on addr (port 0: any) until the test ends and
// returns host:port.
func serveOn(t *testing.T, addr, body string) string {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) }), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// pushDockerfile pushes the work tree to the Python repository and waits
// until its Service answers want, returning the commit, the image it
// runs and its build pod's log; it logs push → serving.
func (j *journey) pushDockerfile(git func(...string) string, want string) (string, string, string) {
	j.t.Helper()
	began := time.Now()
	git("push", "-q", "--force", j.gitRepoURL(pythonRepo), "main")
	sha := git("rev-parse", "HEAD")
	key := client.ObjectKey{Namespace: ns, Name: pythonRepo}
	j.waitApplied(key, sha)
	j.waitBody(j.ingress, j.host(pythonRepo), want, 3*time.Minute)
	total := time.Since(began)
	ctx := context.Background()
	svc, err := j.service(ctx, ns, pythonRepo)
	if err != nil {
		j.t.Fatal(err)
	}
	repo := &knitv1alpha1.GitRepository{}
	if err := j.c.Get(ctx, key, repo); err != nil {
		j.t.Fatal(err)
	}
	var st *knitv1alpha1.BuildStatus
	for i := range repo.Status.Builds {
		if repo.Status.Builds[i].Commit == sha {
			st = &repo.Status.Builds[i]
		}
	}
	if st == nil || st.Phase != knitv1alpha1.BuildSucceeded {
		j.t.Fatalf("no successful build of %.7s in %+v", sha, repo.Status.Builds)
	}
	job := strings.TrimPrefix(st.Job, systemNamespace+"/")
	logs, _ := j.run("kubectl", "logs", "-n", systemNamespace, "job/"+job, "-c", "dockerfile")
	built := st.CompletionTime.Sub(st.StartTime.Time)
	j.t.Logf("TARGET dockerfile:// push → serving %q: %s (build Job %s: %s; the rest — fetch, Job start, apply, rollout — %s)",
		want, total.Round(10*time.Millisecond), built.Round(time.Second), st.Durations, (total - built).Round(10*time.Millisecond))
	return sha, svc.Spec.Template.Spec.Containers[0].Image, logs
}

// copyExample copies an example's regular files into dst.
func (j *journey) copyExample(src, dst string) {
	j.t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		j.t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		j.t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			j.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			j.t.Fatal(err)
		}
	}
}
