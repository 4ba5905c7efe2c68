//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/baseimages"
	"github.com/knitops/knit/internal/testregistry"
)

// TestDockerfileJourney is `git push` of apps in other languages against
// knit dev: the Python and Node examples, each a Dockerfile beside its
// code, are built by BuildKit from the pushed commit and served by
// digest; a code change rebuilds only the changed layer; the same tree
// pushed again builds nothing; a broken Dockerfile says which step failed
// and leaves the last good revision serving; a pull request gets its
// preview. Their bases (python:3.11-slim, node:18-bookworm-slim) come
// from a loopback registry mirroring docker.io, holding the images `make
// base-images` built from Debian's packages: nothing leaves this machine.
func TestDockerfileJourney(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: BuildKit's worker and knit dev's images run with runc, in namespaces and cgroups")
	}
	mirror := serveBases(t)
	d := startKnitDevOn(t, filepath.Join(t.TempDir(), "state"), freeAddr(t), freeAddr(t), "--build-mirror", "docker.io="+mirror)
	j := &dockerfileJourney{t: t, d: d, c: d.client(t)}
	j.python = newGitWorkTree(t, filepath.Join(repoRoot, "examples", "python-hello"), "Hello, Python")
	j.python.git("remote", "add", "knit", d.gitURL(t, "python-hello"))
	j.node = newGitWorkTree(t, filepath.Join(repoRoot, "examples", "node-hello"), "Hello, Node")
	j.node.git("remote", "add", "knit", d.gitURL(t, "node-hello"))

	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"the Python and the Node example deploy by git push, by digest", j.firstPushes},
		{"a code change builds a new digest, its earlier steps from the cache", j.codeChange},
		{"the same tree pushed again builds nothing", j.sameTree},
		{"a broken Dockerfile names its step and the last good revision serves", j.brokenDockerfile},
		{"a pull request of a Dockerfile service gets its preview and canary", j.pullRequest},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { j.t = t; s.run(t) }) {
			t.Fatalf("stopping: %q failed\nknit dev output (tail):\n%s", s.name, tail(d.output.String(), 80))
		}
	}
	for _, line := range j.timings {
		t.Logf("push → serving: %s", line)
	}
}

// serveBases pushes the bases make base-images built to a registry on
// loopback under docker.io's names, and returns its host:port.
func serveBases(t *testing.T) string {
	t.Helper()
	host, stop, err := testregistry.Serve(false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for base, ref := range map[string]string{"python": "library/python:3.11-slim", "node": "library/node:18-bookworm-slim"} {
		dir, err := baseimages.Dir(base)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := baseimages.Push(ctx, dir, host+"/"+ref); err != nil {
			t.Fatalf("push the %s base: %v", base, err)
		}
	}
	return host
}

type dockerfileJourney struct {
	t            *testing.T
	d            *knitDev
	c            client.Client
	python, node *gitWorkTree
	timings      []string
}

const (
	pythonHost = "python-hello.default.localhost"
	nodeHost   = "node-hello.default.localhost"
)

func (j *dockerfileJourney) firstPushes(t *testing.T) {
	began := time.Now()
	j.python.git("push", "--quiet", "knit", "main")
	j.node.git("push", "--quiet", "knit", "main")
	waitBody(t, j.d.httpAddr, pythonHost, "Hello GitOps from Python!", 3*time.Minute)
	waitBody(t, j.d.httpAddr, nodeHost, "Hello GitOps from Node!", 3*time.Minute)
	j.timings = append(j.timings, fmt.Sprintf("first pushes of both examples (cold builds) %s", time.Since(began).Round(time.Millisecond)))
	for _, app := range []string{"python-hello", "node-hello"} {
		image := j.servedImage(app)
		if !strings.Contains(image, "/default/"+app+"/"+app+"@sha256:") {
			t.Errorf("%s runs %q, want the built image by digest", app, image)
		}
		st := j.build(app, j.tree(app).head())
		if st.Phase != knitv1alpha1.BuildSucceeded || st.Image != image {
			t.Errorf("%s status.builds = %+v, want Succeeded with %s", app, st, image)
		}
		// The build's mirror pod: kubectl logs reads BuildKit's output.
		out, err := j.d.kubectl(t, "logs", "-n", "knit-system", "pod/knit-build-"+st.Key[:16])
		if err != nil || !strings.Contains(out, "exporting to image") {
			t.Errorf("kubectl logs of %s's build: %v\n%s", app, err, out)
		}
	}
}

func (j *dockerfileJourney) codeChange(t *testing.T) {
	before := j.servedImage("python-hello")
	j.python.replace("app.py", "from Python!", "from Python, again!")
	sha := j.python.commitAll("Say it again")
	began := time.Now()
	j.python.git("push", "--quiet", "knit", "main")
	waitBody(t, j.d.httpAddr, pythonHost, "Hello GitOps from Python, again!", 3*time.Minute)
	j.timings = append(j.timings, fmt.Sprintf("TARGET code change of the Python example, warm cache %s", time.Since(began).Round(time.Millisecond)))
	after := j.servedImage("python-hello")
	if after == before {
		t.Errorf("a code change kept the image %s", after)
	}
	// The base and WORKDIR come from BuildKit's cache; the COPY of the
	// changed file runs.
	steps := j.stepEvents("python-hello", sha)
	for _, want := range []string{"WORKDIR /app: CACHED", "COPY app.py .: done in"} {
		if !containsLine(steps, want) {
			t.Errorf("no BuildStep Event saying %q for %.7s; got:\n%s", want, sha, strings.Join(steps, "\n"))
		}
	}
}

func (j *dockerfileJourney) sameTree(t *testing.T) {
	builds := len(j.repository("python-hello").Status.Builds)
	image := j.servedImage("python-hello")
	sha := j.python.commitAll("Nothing changed")
	j.python.git("push", "--quiet", "knit", "main")
	j.waitRepository("python-hello", "main applied at "+sha[:7], func(repo *knitv1alpha1.GitRepository) (bool, string) {
		for _, b := range repo.Status.Branches {
			if b.Name == "main" {
				return b.AppliedCommit == sha, "applied " + b.AppliedCommit
			}
		}
		return false, "no main"
	})
	if got := len(j.repository("python-hello").Status.Builds); got != builds {
		t.Errorf("status.builds grew from %d to %d for a commit with the same tree", builds, got)
	}
	if got := j.servedImage("python-hello"); got != image {
		t.Errorf("the same tree serves %s, want still %s", got, image)
	}
	if steps := j.stepEvents("python-hello", sha); len(steps) > 0 {
		t.Errorf("a commit with the same tree ran build steps:\n%s", strings.Join(steps, "\n"))
	}
}

func (j *dockerfileJourney) brokenDockerfile(t *testing.T) {
	good := j.python.read("Dockerfile")
	j.python.replace("Dockerfile", "COPY app.py .\n", "COPY app.py .\nRUN python3 -c 'import knit_missing_module'\n")
	broken := j.python.commitAll("Import what is not there")
	j.python.git("push", "--quiet", "knit", "main")
	j.waitRepository("python-hello", "Synced=False quoting the failing step", func(repo *knitv1alpha1.GitRepository) (bool, string) {
		synced := repo.Status.GetCondition(knitv1alpha1.GitRepositoryConditionSynced)
		return synced.IsFalse() && strings.Contains(synced.Message, broken[:7]) &&
			strings.Contains(synced.Message, "No module named 'knit_missing_module'") &&
			strings.Contains(synced.Message, "RUN python3 -c 'import knit_missing_module'"), fmt.Sprintf("Synced: %+v", synced)
	})
	code, body, err := get(j.d.httpAddr, pythonHost)
	if err != nil || code != 200 || body != "Hello GitOps from Python, again!" {
		t.Errorf("after the broken push python-hello answers %d %q %v, want the last good revision", code, body, err)
	}
	j.python.write("Dockerfile", good)
	j.python.commitAll("Put the Dockerfile back")
	j.python.git("push", "--quiet", "knit", "main")
	j.waitRepository("python-hello", "Synced again", func(repo *knitv1alpha1.GitRepository) (bool, string) {
		synced := repo.Status.GetCondition(knitv1alpha1.GitRepositoryConditionSynced)
		return synced.IsTrue(), fmt.Sprintf("Synced: %+v", synced)
	})
}

func (j *dockerfileJourney) pullRequest(t *testing.T) {
	j.node.git("switch", "--quiet", "-c", "feature")
	j.node.replace("server.js", "from Node!", "from a Node preview!")
	head := j.node.commitAll("Try a feature")
	j.node.git("push", "--quiet", "knit", "feature")
	out := knitCLI(t, j.d, "pr", "open", "--repo", "node-hello", "--head", "feature", "--base", "main", "--canary", "20", "--wait", "4m")
	if !strings.Contains(out, "preview node-hello-pr1-"+head[:7]+" ready at http://pr-1-node-hello.default.localhost") {
		t.Errorf("knit pr open said %q, want the preview and its URL", out)
	}
	waitBody(t, j.d.httpAddr, "pr-1-"+nodeHost, "Hello GitOps from a Node preview!", time.Minute)
	// The canary sends a share of the Service's own traffic to the
	// Revision built from the pull request's Dockerfile.
	const main, preview, n = "Hello GitOps from Node!", "Hello GitOps from a Node preview!", 300
	seen := map[string]int{}
	for i := range n {
		code, body, err := get(j.d.httpAddr, nodeHost)
		if err != nil || code != 200 {
			t.Fatalf("request %d of %d: %d %q %v", i+1, n, code, body, err)
		}
		seen[body]++
	}
	if share := 100 * seen[preview] / n; seen[main]+seen[preview] != n || share < 10 || share > 30 {
		t.Errorf("with a 20%% canary node-hello answered %v over %d requests, want about 20%% %q", seen, n, preview)
	}
}

func (j *dockerfileJourney) tree(app string) *gitWorkTree {
	if app == "node-hello" {
		return j.node
	}
	return j.python
}

// servedImage is the image of the Revision app's Route sends all traffic
// to, once there is one.
func (j *dockerfileJourney) servedImage(app string) string {
	j.t.Helper()
	var image string
	waitFor(j.t, app+" served by one ready Revision", time.Minute, func(ctx context.Context) (bool, string) {
		svc := &servingv1.Service{}
		if err := j.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: app}, svc); err != nil {
			return false, err.Error()
		}
		name := svc.Status.LatestReadyRevisionName
		if name == "" || name != svc.Status.LatestCreatedRevisionName {
			return false, fmt.Sprintf("latest ready %q, created %q", name, svc.Status.LatestCreatedRevisionName)
		}
		rev := &servingv1.Revision{}
		if err := j.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, rev); err != nil {
			return false, err.Error()
		}
		image = rev.Spec.Containers[0].Image
		return true, ""
	})
	return image
}

func (j *dockerfileJourney) repository(app string) *knitv1alpha1.GitRepository {
	j.t.Helper()
	repo := &knitv1alpha1.GitRepository{}
	if err := j.c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: app}, repo); err != nil {
		j.t.Fatal(err)
	}
	return repo
}

// build is the status.builds record of app's commit sha.
func (j *dockerfileJourney) build(app, sha string) knitv1alpha1.BuildStatus {
	for _, b := range j.repository(app).Status.Builds {
		if b.Commit == sha {
			return b
		}
	}
	return knitv1alpha1.BuildStatus{}
}

func (j *dockerfileJourney) waitRepository(app, what string, cond func(*knitv1alpha1.GitRepository) (bool, string)) {
	j.t.Helper()
	waitFor(j.t, what, 3*time.Minute, func(ctx context.Context) (bool, string) {
		repo := &knitv1alpha1.GitRepository{}
		if err := j.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: app}, repo); err != nil {
			return false, err.Error()
		}
		return cond(repo)
	})
}

// stepEvents are the BuildStep Events of app's repository for commit sha.
func (j *dockerfileJourney) stepEvents(app, sha string) []string {
	j.t.Helper()
	evs := &eventsv1.EventList{}
	if err := j.c.List(context.Background(), evs, client.InNamespace("default")); err != nil {
		j.t.Fatal(err)
	}
	var out []string
	for _, e := range evs.Items {
		if e.Reason == "BuildStep" && e.Regarding.Name == app && strings.Contains(e.Note, " of "+sha[:7]+": ") {
			out = append(out, e.Note)
		}
	}
	return out
}

func containsLine(lines []string, part string) bool {
	for _, l := range lines {
		if strings.Contains(l, part) {
			return true
		}
	}
	return false
}

// knitCLI runs the knit CLI against d.
func knitCLI(t *testing.T, d *knitDev, args ...string) string {
	t.Helper()
	j := &gitopsJourney{t: t, d: d}
	return j.knit(args...)
}
