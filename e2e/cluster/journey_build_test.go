//go:build cluster

package cluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// The build journey's registry, on the test cluster's node (make
// cluster), and the repository it pushes.
const (
	registry  = "10.250.0.2:5000"
	buildRepo = "journey-build"
	// hostIP is the host's end of the node's veth: where build pods reach
	// the journey's module proxy.
	hostIP = "10.250.0.1"
)

// moduleProxy is a GOPROXY in front of a module cache holding go-cmp,
// counting the requests it answers: a build that downloads nothing leaves
// the count alone.
type moduleProxy struct {
	url      string
	requests atomic.Int64
}

// newModuleProxy serves a GOPROXY (Go's module cache layout is the
// protocol) on the host's veth address, filled offline from this
// machine's module cache.
func (j *journey) newModuleProxy(t *testing.T) *moduleProxy {
	t.Helper()
	modcache := filepath.Join(j.tmp, "proxy-modcache")
	local, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	dl := exec.Command("go", "mod", "download", "github.com/google/go-cmp@v0.7.0")
	dl.Dir = t.TempDir()
	dl.Env = append(os.Environ(), "GOMODCACHE="+modcache, "GOFLAGS=-mod=mod", "GOSUMDB=off",
		"GOPROXY=file://"+filepath.Join(strings.TrimSpace(string(local)), "cache", "download"))
	if out, err := dl.CombinedOutput(); err != nil {
		t.Fatalf("go mod download: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(hostIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	p := &moduleProxy{url: "http://" + ln.Addr().String()}
	files := http.FileServer(http.Dir(filepath.Join(modcache, "cache", "download")))
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		files.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

// writeBuildRepo writes a Go app whose ./cmd/hello greets greeting on
// $PORT (using go-cmp, so a cold build downloads a module), and a Service
// running it as ko://./cmd/hello. broken writes code that does not
// compile.
func (j *journey) writeBuildRepo(dir, greeting string, broken bool) {
	j.t.Helper()
	body := fmt.Sprintf(`fmt.Fprintln(w, "Hello %s!", cmp.Equal(1, 1))`, greeting)
	if broken {
		body = `fmt.Fprintln(w, undefinedGreeting)`
	}
	files := map[string]string{
		"go.mod": "module example.com/hello\n\ngo 1.22\n\nrequire github.com/google/go-cmp v0.7.0\n",
		"go.sum": "github.com/google/go-cmp v0.7.0 h1:wk8382ETsv4JYUZwIsn6YpYiWiBsYLSJiTsyBybVuN8=\n" +
			"github.com/google/go-cmp v0.7.0/go.mod h1:pXiqmnSA92OHEEa9HXL2W4E7lf9JzCmGVUdgjX3N/iU=\n",
		"cmd/hello/main.go": `package main

import (
	"fmt"
	"net/http"
	"os"

	"github.com/google/go-cmp/cmp"
)

func main() {
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		` + body + `
	})
	_ = http.ListenAndServe(":"+os.Getenv("PORT"), nil)
}
`,
		"kustomization.yaml": "resources:\n  - service.yaml\n",
		"service.yaml": `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: built
spec:
  template:
    spec:
      containers:
        - image: ko://./cmd/hello
`,
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			j.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			j.t.Fatal(err)
		}
	}
}

// build is status.builds' record of a commit's build.
func (j *journey) build(ctx context.Context, sha string) (*knitv1alpha1.BuildStatus, *knitv1alpha1.GitRepository, error) {
	repo := &knitv1alpha1.GitRepository{}
	if err := j.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: buildRepo}, repo); err != nil {
		return nil, nil, err
	}
	for i := range repo.Status.Builds {
		if repo.Status.Builds[i].Commit == sha {
			return &repo.Status.Builds[i], repo, nil
		}
	}
	return nil, repo, fmt.Errorf("no build of %.7s in %+v", sha, repo.Status.Builds)
}

// buildJobs counts the build Jobs of the journey's repository.
func (j *journey) buildJobs(ctx context.Context) int {
	jobs := &batchv1.JobList{}
	if err := j.c.List(ctx, jobs, client.InNamespace(systemNamespace), client.MatchingLabels{"knit.dev/repository": buildRepo}); err != nil {
		j.t.Fatal(err)
	}
	return len(jobs.Items)
}

// pushBuilt pushes the work tree and waits until the Service serves want,
// returning the commit and the image it runs; it logs push → serving.
func (j *journey) pushBuilt(git func(...string) string, want string) (string, string) {
	j.t.Helper()
	began := time.Now()
	git("push", "-q", "--force", j.gitRepoURL(buildRepo), "main")
	sha := git("rev-parse", "HEAD")
	j.waitApplied(client.ObjectKey{Namespace: ns, Name: buildRepo}, sha)
	j.waitBody(j.ingress, j.host("built"), want, 3*time.Minute)
	total := time.Since(began)
	ctx := context.Background()
	svc, err := j.service(ctx, ns, "built")
	if err != nil {
		j.t.Fatal(err)
	}
	image := svc.Spec.Template.Spec.Containers[0].Image
	b, _, err := j.build(ctx, sha)
	if err != nil {
		j.t.Fatal(err)
	}
	built := b.CompletionTime.Sub(b.StartTime.Time)
	j.t.Logf("push → serving %q: %s (build Job %s: %s; the rest — fetch, Job start, apply, rollout — %s)",
		want, total.Round(10*time.Millisecond), built.Round(time.Second), b.Durations, (total - built).Round(10*time.Millisecond))
	return sha, image
}

func (j *journey) buildOnPush(t *testing.T) {
	proxy := j.newModuleProxy(t)
	j.must("helm", "upgrade", "knit", "charts/knit", "-n", systemNamespace, "--reuse-values", "--wait", "--timeout", "3m",
		"--set", "build.registry="+registry, "--set", "build.insecure=true", "--set", "build.cache.size=1Gi",
		"--set", "build.goproxy="+proxy.url)
	dir, err := os.MkdirTemp(j.tmp, "build")
	if err != nil {
		t.Fatal(err)
	}
	git := j.gitIn(dir)
	git("init", "-q", "-b", "main")
	j.writeBuildRepo(dir, "v1", false)
	git("add", ".")
	git("commit", "-qm", "v1")
	ctx := context.Background()

	// A push of code: built in the cluster, deployed by digest.
	sha1, image1 := j.pushBuilt(git, "Hello v1! true")
	if !strings.HasPrefix(image1, registry+"/"+ns+"/"+buildRepo+"/hello@sha256:") {
		t.Fatalf("the Service runs %q, want an image of %s by digest", image1, registry)
	}
	if proxy.requests.Load() == 0 {
		t.Errorf("the cold build fetched nothing through build.goproxy %s", proxy.url)
	}

	// A code change: a new digest, and the module cache is warm.
	before := proxy.requests.Load()
	j.writeBuildRepo(dir, "v2", false)
	git("commit", "-qam", "v2")
	sha2, image2 := j.pushBuilt(git, "Hello v2! true")
	if image2 == image1 {
		t.Errorf("a code change kept the image %s", image1)
	}
	if n := proxy.requests.Load() - before; n != 0 {
		t.Errorf("the second build asked the module proxy %d times, want 0 (module cache on the PVC)", n)
	}

	// The same tree again: no build.
	jobs := j.buildJobs(ctx)
	git("commit", "-q", "--allow-empty", "-m", "same tree")
	git("push", "-q", j.gitRepoURL(buildRepo), "main")
	sha3 := git("rev-parse", "HEAD")
	j.waitApplied(client.ObjectKey{Namespace: ns, Name: buildRepo}, sha3)
	if n := j.buildJobs(ctx); n != jobs {
		t.Errorf("pushing the same tree made %d build Jobs, want none", n-jobs)
	}
	if svc, _ := j.service(ctx, ns, "built"); svc.Spec.Template.Spec.Containers[0].Image != image2 {
		t.Errorf("the same tree runs %s, want %s", svc.Spec.Template.Spec.Containers[0].Image, image2)
	}

	// Code that does not compile: the compiler's error on the
	// GitRepository, v2 keeps serving.
	j.writeBuildRepo(dir, "", true)
	git("commit", "-qam", "broken")
	git("push", "-q", j.gitRepoURL(buildRepo), "main")
	sha4 := git("rev-parse", "HEAD")
	j.waitFor("the broken build reported", 3*time.Minute, func(ctx context.Context) (bool, string) {
		b, repo, err := j.build(ctx, sha4)
		if err != nil || b.Phase != knitv1alpha1.BuildFailed {
			return false, fmt.Sprint(b, err)
		}
		synced := repo.Status.GetCondition(knitv1alpha1.GitRepositoryConditionSynced)
		ok := synced.IsFalse() && strings.Contains(synced.Message, "undefined: undefinedGreeting") &&
			strings.Contains(b.Message, "cmd/hello/main.go")
		return ok, fmt.Sprintf("build %+v; Synced %+v", b, synced)
	})
	if code, body, err := j.get(j.ingress, j.host("built")); err != nil || code != http.StatusOK || body != "Hello v2! true" {
		t.Errorf("after a failed build the Service answers %d %q %v, want v2", code, body, err)
	}
	t.Logf("builds: v1 %.7s, v2 %.7s, same tree %.7s, broken %.7s", sha1, sha2, sha3, sha4)
}
