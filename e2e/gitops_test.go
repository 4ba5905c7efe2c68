//go:build !unit

package e2e

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// The labels and annotations knit documents on what it deploys from Git.
const (
	repositoryLabel   = "knit.dev/repository"
	branchLabel       = "knit.dev/branch"
	pullRequestLabel  = "knit.dev/pull-request"
	commitAnnotation  = "knit.dev/commit"
	authorAnnotation  = "knit.dev/author"
	messageAnnotation = "knit.dev/message"
)

// The event types knit documents.
const (
	typeRevisionReady  = "dev.knit.revision.ready"
	typeRevisionFailed = "dev.knit.revision.failed"
	typeRouteUpdated   = "dev.knit.route.updated"
	typeSyncFailed     = "dev.knit.sync.failed"
)

// TestGitOpsJourney is the GitOps issue's journey against knit dev with
// the real git CLI: a push deploys examples/gitops-hello as hello-<sha7>;
// a second push rolls out, while docs-only commits and repeated pushes
// stamp nothing; a pull request previews under its tag and takes its
// canary share, follows pushes to its branch, and leaves nothing when
// closed, while a merged one promotes main's new commit and one adding a
// Service previews it as a Service of its own; a broken YAML
// push and an app that never gets ready each leave the last good revision
// serving until a good push recovers; every ready revision is announced
// exactly once to CloudEvents sinks (binary and structured); a signed
// GitHub push webhook is taken and unsigned or mis-signed ones are refused.
func TestGitOpsJourney(t *testing.T) {
	d := startKnitDev(t, filepath.Join(t.TempDir(), "state"))
	j := &gitopsJourney{t: t, d: d, c: d.client(t), ready: map[string]string{}}

	// The sinks listen before the first push, so they hear everything.
	// They listen on loopback, where knit's egress policy sends nothing
	// until an operator allows it: the first is refused, then allowed.
	j.binary, j.structured = startEventSink(t), startEventSink(t)
	j.createSink("journey-binary", j.binary, knitv1alpha1.EventEncodingBinary, true)
	j.createSink("journey-structured", j.structured, knitv1alpha1.EventEncodingStructured, false)

	j.app = newGitWorkTree(t, filepath.Join(repoRoot, "examples", "gitops-hello"), "Hello, GitOps\n\nThe first deploy.")
	j.app.git("remote", "add", "knit", d.gitURL(t, "hello"))

	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"the Git server refuses requests without its token or for other hosts, and creates nothing", j.gitServerRefusesStrangers},
		{"a first push deploys hello-<sha7>", j.firstPush},
		{"a second push rolls out; docs-only commits and repeated pushes stamp nothing", j.secondPush},
		{"a pull request previews under its tag, canaries, follows its branch and leaves nothing when closed", j.pullRequest},
		{"a merged pull request promotes main's new commit", j.mergedPullRequest},
		{"a PR adding a new Service gets a preview URL that answers", j.pullRequestAddingService},
		{"a broken push and an app that never gets ready leave the last good revision serving", j.badCommits},
		{"a signed GitHub push webhook is taken, an unsigned or mis-signed one refused", j.webhook},
		{"every ready revision is announced once with its commit", j.announcements},
		{"an age-encrypted Secret is decrypted for the app; one for another key is refused", j.encryptedSecret},
		{"with spec.verify an unsigned push is refused and a signed one deploys", j.signedCommits},
		{"deleting the GitRepository deletes what it deployed", j.deleteRepository},
	}
	for _, s := range steps {
		j.t = t
		if !t.Run(s.name, func(t *testing.T) { j.t = t; s.run(t) }) {
			t.Fatalf("stopping: %q failed\nknit dev output (tail):\n%s", s.name, tail(d.output.String(), 80))
		}
	}
	for _, step := range j.timings {
		t.Logf("push → serving: %s", step)
	}
}

// gitopsJourney is the state the steps hand on.
type gitopsJourney struct {
	t                  *testing.T
	d                  *knitDev
	c                  client.Client
	app                *gitWorkTree
	binary, structured *eventSink

	// ready maps every Revision the journey saw Ready to its commit.
	ready map[string]string
	// main is the revision serving hello, greeting what it answers.
	main     string
	greeting string
	// crashed is the revision whose app never got ready.
	crashed string
	timings []string
}

const helloHost = "hello.default.localhost"

func (j *gitopsJourney) firstPush(t *testing.T) {
	sha := j.app.head()
	took := j.pushServes("main", helloHost, "Hello GitOps!", 5*time.Minute)
	j.timings = append(j.timings, fmt.Sprintf("first push (cold build of ko://./cmd/hello) %s", took))

	name := "hello-" + sha[:7]
	rev := j.waitReady(name, sha, time.Minute)
	wantAnn := map[string]string{commitAnnotation: sha, authorAnnotation: gitAuthorName + " <" + gitAuthorEmail + ">", messageAnnotation: "Hello, GitOps"}
	for k, want := range wantAnn {
		if got := rev.Annotations[k]; got != want {
			t.Errorf("revision %s annotation %s = %q, want %q", name, k, got, want)
		}
	}
	for k, want := range map[string]string{repositoryLabel: "hello", branchLabel: "main"} {
		if got := rev.Labels[k]; got != want {
			t.Errorf("revision %s label %s = %q, want %q", name, k, got, want)
		}
	}
	j.serving(name, "Hello GitOps!")
	j.waitCondition("GitRepository hello ready", func(repo *knitv1alpha1.GitRepository) (bool, string) {
		ready := repo.Status.GetCondition(duckv1.ConditionReady)
		return ready.IsTrue() && repo.Spec.URL == "http://"+j.d.gitAddr+"/git/hello.git", fmt.Sprintf("url %s, conditions %+v", repo.Spec.URL, repo.Status.Conditions)
	})
	if out, err := j.d.kubectl(t, "get", "revisions"); err != nil || !strings.Contains(out, name) {
		t.Errorf("kubectl get revisions does not show %s: %v\n%s", name, err, out)
	}
}

func (j *gitopsJourney) secondPush(t *testing.T) {
	first := j.main
	j.app.replace("service.yaml", "value: GitOps\n", "value: Git\n")
	sha := j.app.commitAll("Greet Git")
	took := j.pushServes("main", helloHost, "Hello Git!", 2*time.Minute)
	j.timings = append(j.timings, fmt.Sprintf("TARGET change, app already built %s", took))
	name := "hello-" + sha[:7]
	j.waitReady(name, sha, time.Minute)
	j.serving(name, "Hello Git!")
	j.waitRoute(name)
	if got, want := j.mainRevisions(), sorted(first, name); !slices.Equal(got, want) {
		t.Fatalf("revisions after the second push = %v, want the new one and the old one %v", got, want)
	}

	// A commit that changes no template, and one with the same tree, are
	// applied but keep the revision.
	j.app.write("README.md", j.app.read("README.md")+"\nDeployed by the GitOps journey.\n")
	for _, msg := range []string{"Docs only", "Same tree again"} {
		sha := j.app.commitAll(msg)
		j.push("main")
		j.waitApplied("main", sha)
		if got, want := j.mainRevisions(), sorted(first, name); !slices.Equal(got, want) {
			t.Errorf("revisions after %.7s (%s) = %v, want still %v", sha, msg, got, want)
		}
		j.serving(name, "Hello Git!")
	}

	// Pushing the same commit again changes no ref: nothing to sync.
	if out := j.app.git("push", "knit", "main"); !strings.Contains(out, "Everything up-to-date") {
		t.Errorf("pushing main again: %s, want Everything up-to-date", out)
	}
	if got, want := j.mainRevisions(), sorted(first, name); !slices.Equal(got, want) {
		t.Errorf("revisions after pushing again = %v, want still %v", got, want)
	}
}

func (j *gitopsJourney) pullRequest(t *testing.T) {
	mainGreeting := j.greeting
	j.app.git("switch", "--quiet", "-c", "feature")
	j.app.replace("service.yaml", "value: Git\n", "value: Feature\n")
	head := j.app.commitAll("Try a feature")
	j.push("feature")
	out := j.knit("pr", "open", "--repo", "hello", "--head", "feature", "--base", "main", "--canary", "20", "--wait", "4m")
	preview := "hello-pr1-" + head[:7]
	if !strings.Contains(out, "preview "+preview+" ready at http://pr-1-hello.default.localhost") {
		t.Errorf("knit pr open said %q, want the preview %s and its URL", out, preview)
	}
	j.ready[preview] = head
	waitBody(t, j.d.httpAddr, "pr-1-"+helloHost, "Hello Feature!", time.Minute)

	seen := j.answers(500)
	share := float64(seen["Hello Feature!"]) / 5
	t.Logf("canary 20%%: answers over 500 requests %v (feature %.1f%%)", seen, share)
	if seen["Hello Feature!"]+seen[mainGreeting] != 500 || share < 15 || share > 25 {
		t.Errorf("answers over 500 requests = %v, want 20 ± 5 %% %q and the rest %q", seen, "Hello Feature!", mainGreeting)
	}

	// A push to the pull request's branch updates the preview.
	j.app.replace("service.yaml", "value: Feature\n", "value: Feature two\n")
	next := j.app.commitAll("Refine the feature")
	took := j.pushServes("feature", "pr-1-"+helloHost, "Hello Feature two!", 3*time.Minute)
	j.timings = append(j.timings, fmt.Sprintf("push to a pull request's branch → preview %s", took))
	nextPreview := "hello-pr1-" + next[:7]
	j.waitReady(nextPreview, next, time.Minute)
	j.waitGone(preview)

	j.knit("pr", "close", "--repo", "hello", "1")
	j.waitNotFound("pr-1-" + helloHost)
	j.waitGone(nextPreview)
	if seen := j.answers(200); seen[mainGreeting] != 200 {
		t.Errorf("after close, answers over 200 requests = %v, want all %q", seen, mainGreeting)
	}
	j.waitPullRequestDone(1, "Closed")
	j.app.git("switch", "--quiet", "main")
}

func (j *gitopsJourney) mergedPullRequest(t *testing.T) {
	j.app.git("switch", "--quiet", "-c", "polish")
	j.app.replace("service.yaml", "value: Git\n", "value: Merged\n")
	head := j.app.commitAll("Polish the greeting")
	j.push("polish")
	out := j.knit("pr", "open", "--repo", "hello", "--head", "polish", "--base", "main", "--wait", "4m")
	preview := "hello-pr2-" + head[:7]
	if !strings.Contains(out, "preview "+preview+" ready at http://pr-2-hello.default.localhost") {
		t.Errorf("knit pr open said %q, want the preview %s and its URL", out, preview)
	}
	j.ready[preview] = head
	waitBody(t, j.d.httpAddr, "pr-2-"+helloHost, "Hello Merged!", time.Minute)
	if seen := j.answers(100); seen[j.greeting] != 100 {
		t.Errorf("a pull request without canary took traffic: answers over 100 requests = %v", seen)
	}

	j.app.git("switch", "--quiet", "main")
	j.app.git("merge", "--quiet", "--no-ff", "-m", "Merge polish", "polish")
	merge := j.app.head()
	took := j.pushServes("main", helloHost, "Hello Merged!", 2*time.Minute)
	j.timings = append(j.timings, fmt.Sprintf("merge pushed to main %s", took))
	j.knit("pr", "merge", "--repo", "hello", "2")
	name := "hello-" + merge[:7]
	j.waitReady(name, merge, time.Minute)
	j.serving(name, "Hello Merged!")
	j.waitNotFound("pr-2-" + helloHost)
	j.waitGone(preview)
	j.waitPullRequestDone(2, "Merged")
	if seen := j.answers(100); seen["Hello Merged!"] != 100 {
		t.Errorf("after the merge, answers over 100 requests = %v, want all Hello Merged!", seen)
	}
}

// greeterYAML is a Service the journey's third pull request adds.
const greeterYAML = `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: greeter
spec:
  template:
    spec:
      containers:
        - image: ko://./cmd/hello
          env:
            - name: TARGET
              value: Greeter
`

// pullRequestAddingService opens a pull request whose head adds Service
// greeter: it is previewed as Service greeter-pr-3, whose URL is the pull
// request's and answers, while production gets no greeter and hello
// keeps serving; closing the pull request deletes the preview Service.
func (j *gitopsJourney) pullRequestAddingService(t *testing.T) {
	j.app.git("switch", "--quiet", "-c", "greeter")
	j.app.write("greeter.yaml", greeterYAML)
	j.app.replace("kustomization.yaml", "  - service.yaml\n", "  - service.yaml\n  - greeter.yaml\n")
	head := j.app.commitAll("Add a greeter")
	j.push("greeter")
	out := j.knit("pr", "open", "--repo", "hello", "--head", "greeter", "--base", "main", "--wait", "4m")
	const host = "greeter-pr-3.default.localhost"
	if !strings.Contains(out, "preview ready at http://"+host) {
		t.Errorf("knit pr open said %q, want the preview Service's URL http://%s", out, host)
	}
	j.waitReady("greeter-pr-3-"+head[:7], head, time.Minute)
	waitBody(t, j.d.httpAddr, host, "Hello Greeter!", time.Minute)
	if err := j.c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "greeter"}, &servingv1.Service{}); !apierrors.IsNotFound(err) {
		t.Errorf("Service greeter deployed before the merge: %v", err)
	}
	j.serving(j.main, j.greeting)
	// Its readiness is announced (with the preview Service's URL, which
	// the announcer waits for) before the pull request closes: a Revision
	// deleted first would never be.
	rev := "greeter-pr-3-" + head[:7]
	j.waitEvent(j.binary, "revision.ready for "+rev, ofType(typeRevisionReady, "default/"+rev))

	j.knit("pr", "close", "--repo", "hello", "3")
	waitFor(t, "preview Service greeter-pr-3 deleted", time.Minute, func(ctx context.Context) (bool, string) {
		err := j.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "greeter-pr-3"}, &servingv1.Service{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	j.waitNotFound(host)
	j.waitPullRequestDone(3, "Closed")
	j.app.git("switch", "--quiet", "main")
}

func (j *gitopsJourney) badCommits(t *testing.T) {
	good := j.app.read("service.yaml")
	last, greeting := j.main, j.greeting

	// A YAML syntax error is refused before anything is applied.
	j.app.write("service.yaml", good+"oops: [unclosed\n")
	broken := j.app.commitAll("Break the YAML")
	j.push("main")
	failed := j.waitEvent(j.binary, "sync.failed for "+broken[:7], func(e knitEvent) bool {
		return e.Type == typeSyncFailed && e.Data.Commit == broken
	})
	if failed.Subject != "default/hello" || failed.Data.Branch != "main" || failed.Data.Failure == nil || failed.Data.Message != "Break the YAML" {
		t.Errorf("sync.failed event = %+v, want subject default/hello, branch main, the commit's message and a failure", failed)
	}
	j.waitCondition("Synced=False naming "+broken[:7], func(repo *knitv1alpha1.GitRepository) (bool, string) {
		synced := repo.Status.GetCondition(knitv1alpha1.GitRepositoryConditionSynced)
		return synced.IsFalse() && strings.Contains(synced.Message, broken[:7]), fmt.Sprintf("Synced: %+v", synced)
	})
	j.serving(last, greeting)
	if got := j.mainRevisions(); slices.Contains(got, "hello-"+broken[:7]) {
		t.Errorf("a revision was stamped for the broken commit: %v", got)
	}

	// Code that exits before it listens deploys a revision that fails.
	j.app.write("service.yaml", good)
	j.app.replace("cmd/hello/main.go", `log.Printf("hello listening on :%s", port)`, `log.Fatalf("boom: refusing to listen on :%s", port)`)
	crash := j.app.commitAll("Crash on start")
	j.push("main")
	j.crashed = "hello-" + crash[:7]
	failedRev := j.waitEvent(j.binary, "revision.failed for "+j.crashed, ofType(typeRevisionFailed, "default/"+j.crashed))
	if failedRev.Data.Commit != crash || failedRev.Data.Revision != j.crashed || failedRev.Data.Failure == nil || failedRev.Data.Failure.Reason == "" {
		t.Errorf("revision.failed event = %+v, want commit %s, revision %s and a failure reason", failedRev, crash, j.crashed)
	}
	j.waitCondition("RevisionsReady=False naming "+crash[:7], func(repo *knitv1alpha1.GitRepository) (bool, string) {
		cond := repo.Status.GetCondition(knitv1alpha1.GitRepositoryConditionRevisionsReady)
		return cond.IsFalse() && strings.Contains(cond.Message, crash[:7]), fmt.Sprintf("RevisionsReady: %+v", cond)
	})
	j.serving(last, greeting)

	// A good push recovers.
	j.app.git("checkout", "HEAD~1", "--", "cmd/hello/main.go")
	j.app.replace("service.yaml", "value: Merged\n", "value: Recovered\n")
	fix := j.app.commitAll("Recover")
	took := j.pushServes("main", helloHost, "Hello Recovered!", 2*time.Minute)
	j.timings = append(j.timings, fmt.Sprintf("recovery push %s", took))
	name := "hello-" + fix[:7]
	j.waitReady(name, fix, time.Minute)
	j.serving(name, "Hello Recovered!")
	j.waitCondition("Synced and RevisionsReady again", func(repo *knitv1alpha1.GitRepository) (bool, string) {
		synced := repo.Status.GetCondition(knitv1alpha1.GitRepositoryConditionSynced)
		revs := repo.Status.GetCondition(knitv1alpha1.GitRepositoryConditionRevisionsReady)
		return synced.IsTrue() && revs.IsTrue(), fmt.Sprintf("Synced: %+v; RevisionsReady: %+v", synced, revs)
	})
}

func (j *gitopsJourney) webhook(t *testing.T) {
	ctx := context.Background()
	secret := []byte("journey-webhook-secret")
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-webhook", Labels: map[string]string{"knit.dev/git-credentials": "true"}}, Data: map[string][]byte{"webhookSecret": secret}}
	if err := j.c.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"}}
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"secretRef":{"name":"hello-webhook"},"provider":"github"}}`))
	if err := j.c.Patch(ctx, repo, patch); err != nil {
		t.Fatal(err)
	}

	head := j.app.head()
	body := []byte(fmt.Sprintf(`{"ref":"refs/heads/main","before":%q,"after":%q,"repository":{"id":1,"full_name":"git/hello"},`+
		`"pusher":{"name":"ada"},"sender":{"login":"ada"},"head_commit":{"id":%q,"message":"Recover","author":{"name":%q,"email":%q}}}`,
		j.app.git("rev-parse", "HEAD~1")[:40], head, head, gitAuthorName, gitAuthorEmail))
	url := "http://" + j.d.gitAddr + "/hooks/github/hello"
	deliveries := 0
	post := func(signature string) (int, string) {
		deliveries++
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "push")
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("journey-%d", deliveries))
		if signature != "" {
			req.Header.Set("X-Hub-Signature-256", signature)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, strings.TrimSpace(b.String())
	}

	// knit reads the secret through its cache: it may take a moment to see it.
	waitFor(t, "a signed push webhook answers 2xx", 30*time.Second, func(context.Context) (bool, string) {
		code, msg := post(sign(secret, body))
		return code/100 == 2, fmt.Sprintf("%d %s", code, msg)
	})
	for name, sig := range map[string]string{"unsigned": "", "signed with another secret": sign([]byte("not the secret"), body)} {
		if code, msg := post(sig); code != http.StatusUnauthorized {
			t.Errorf("%s webhook: %d %s, want 401", name, code, msg)
		}
	}
	j.serving(j.main, j.greeting)
}

func (j *gitopsJourney) announcements(t *testing.T) {
	for name, sha := range j.ready {
		subject := "default/" + name
		j.waitEvent(j.binary, "revision.ready for "+name, ofType(typeRevisionReady, subject))
		got := j.binary.events(ofType(typeRevisionReady, subject))
		if len(got) != 1 {
			t.Errorf("revision.ready events for %s = %v, want exactly one", name, got)
		}
		e := got[0]
		if e.Data.Commit != sha || e.Data.Revision != name || e.Data.Repo != "hello" || e.Data.Author != gitAuthorName+" <"+gitAuthorEmail+">" || e.Data.URL == "" {
			t.Errorf("revision.ready event for %s = %+v, want commit %s, repo hello, the author and a URL", name, e.Data, sha)
		}
		if rev, err := j.revision(context.Background(), name); err == nil && rev.Annotations[commitAnnotation] != e.Data.Commit {
			t.Errorf("revision.ready event for %s carries commit %s, the Revision says %s", name, e.Data.Commit, rev.Annotations[commitAnnotation])
		}
	}
	for _, e := range j.binary.events(ofType(typeRevisionReady, "")) {
		if _, ok := j.ready[strings.TrimPrefix(e.Subject, "default/")]; !ok {
			t.Errorf("revision.ready for a revision the journey did not see ready: %v", e)
		}
	}
	if j.crashed != "" {
		if got := j.binary.events(ofType(typeRevisionReady, "default/"+j.crashed)); len(got) != 0 {
			t.Errorf("the revision that never got ready was announced ready: %v", got)
		}
	}
	j.waitEvent(j.binary, "route.updated naming "+j.main, func(e knitEvent) bool {
		return e.Type == typeRouteUpdated && e.Subject == "default/hello" && e.Data.Revision == j.main && e.Data.URL != ""
	})

	// The structured sink hears the same events, in its own encoding.
	waitFor(t, "the structured sink has every event the binary one has", time.Minute, func(context.Context) (bool, string) {
		var missing []string
		have := map[string]bool{}
		for _, e := range j.structured.events(nil) {
			have[e.ID] = true
		}
		for _, e := range j.binary.events(nil) {
			if !have[e.ID] {
				missing = append(missing, e.String())
			}
		}
		return len(missing) == 0, fmt.Sprintf("missing %v", missing)
	})
	for _, s := range []struct {
		sink       *eventSink
		structured bool
	}{{j.binary, false}, {j.structured, true}} {
		for _, e := range s.sink.events(nil) {
			if e.Structured != s.structured {
				t.Errorf("event %v structured=%t, want %t", e, e.Structured, s.structured)
			}
		}
		if bad := s.sink.rejected(); len(bad) > 0 {
			t.Errorf("sink received requests that are not knit CloudEvents: %v", bad)
		}
	}
	t.Logf("events received: %d distinct by the binary sink", len(j.binary.events(nil)))
}

// push pushes branch to knit, failing the test if git does.
// deleteRepository deletes the GitRepository with its default
// deletionPolicy (Delete): its Service goes with it and its host stops
// answering.
func (j *gitopsJourney) deleteRepository(t *testing.T) {
	if out, err := j.d.kubectl(t, "delete", "gitrepository", "hello", "--wait=true", "--timeout=2m"); err != nil {
		t.Fatalf("kubectl delete gitrepository hello: %v\n%s", err, out)
	}
	waitFor(t, "Service hello deleted with its repository", time.Minute, func(ctx context.Context) (bool, string) {
		err := j.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, &servingv1.Service{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	j.waitNotFound(helloHost)
}

func (j *gitopsJourney) push(branch string) {
	j.t.Helper()
	j.app.git("push", "--quiet", "knit", branch)
}

// pushServes pushes branch and waits for host to answer want; it returns
// how long that took from the start of the push.
func (j *gitopsJourney) pushServes(branch, host, want string, timeout time.Duration) time.Duration {
	j.t.Helper()
	began := time.Now()
	j.push(branch)
	waitBody(j.t, j.d.httpAddr, host, want, timeout)
	return time.Since(began)
}

// knit runs the knit CLI against this knit dev.
func (j *gitopsJourney) knit(args ...string) string {
	j.t.Helper()
	args = slices.Insert(args, 2, "--kubeconfig", filepath.Join(j.d.stateDir, "kubeconfig"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, buildKnit(j.t), args...).CombinedOutput()
	if err != nil {
		j.t.Fatalf("knit %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// createSink creates an EventSink for s and waits until it is Ready: with
// refusedFirst, it sees the egress policy refuse s's loopback address
// before allowing it, else it allows it first.
func (j *gitopsJourney) createSink(name string, s *eventSink, encoding knitv1alpha1.EventEncoding, refusedFirst bool) {
	j.t.Helper()
	es := &knitv1alpha1.EventSink{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: knitv1alpha1.EventSinkSpec{URI: s.URL(), Encoding: encoding}}
	if !refusedFirst {
		allowEgress(j.t, j.c, s.addr())
	}
	if err := j.c.Create(context.Background(), es); err != nil {
		j.t.Fatal(err)
	}
	if refusedFirst {
		waitSinkRefused(j.t, j.c, es)
		allowEgress(j.t, j.c, s.addr())
	}
	waitFor(j.t, "EventSink "+name+" ready", time.Minute, func(ctx context.Context) (bool, string) {
		if err := j.c.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
			return false, err.Error()
		}
		ready := es.Status.GetCondition(duckv1.ConditionReady)
		return ready.IsTrue(), fmt.Sprintf("%+v", ready)
	})
}

func (j *gitopsJourney) revision(ctx context.Context, name string) (*servingv1.Revision, error) {
	rev := &servingv1.Revision{}
	return rev, j.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, rev)
}

// waitReady waits for Revision name to be Ready, checks that it says
// which commit it runs, and remembers it.
func (j *gitopsJourney) waitReady(name, sha string, timeout time.Duration) *servingv1.Revision {
	j.t.Helper()
	var rev *servingv1.Revision
	waitFor(j.t, "Revision "+name+" ready", timeout, func(ctx context.Context) (bool, string) {
		var err error
		if rev, err = j.revision(ctx, name); err != nil {
			return false, err.Error()
		}
		ready := rev.Status.GetCondition(duckv1.ConditionReady)
		return ready.IsTrue(), fmt.Sprintf("%+v", ready)
	})
	if got := rev.Annotations[commitAnnotation]; got != sha {
		j.t.Errorf("Revision %s annotation %s = %q, want the full SHA %s", name, commitAnnotation, got, sha)
	}
	j.ready[name] = sha
	return rev
}

// serving waits for the Service hello to route all its traffic to
// revision, checks that hello answers greeting, and remembers both.
func (j *gitopsJourney) serving(revision, greeting string) {
	j.t.Helper()
	want := []string{revision + "=100%"}
	waitFor(j.t, fmt.Sprintf("Service hello routes %v", want), 30*time.Second, func(ctx context.Context) (bool, string) {
		svc := &servingv1.Service{}
		if err := j.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, svc); err != nil {
			return false, err.Error()
		}
		var routed []string
		for _, tt := range svc.Status.Traffic {
			if ptr.Deref(tt.Percent, 0) > 0 {
				routed = append(routed, fmt.Sprintf("%s=%d%%", tt.RevisionName, *tt.Percent))
			}
		}
		return slices.Equal(routed, want), fmt.Sprintf("routes %v", routed)
	})
	code, body, err := get(j.d.httpAddr, helloHost)
	if err != nil || code != http.StatusOK || body != greeting {
		j.t.Errorf("%s answered %d %q %v, want %q", helloHost, code, body, err, greeting)
	}
	j.main, j.greeting = revision, greeting
}

// waitRoute waits for the Route hello to send all traffic to revision.
func (j *gitopsJourney) waitRoute(revision string) {
	j.t.Helper()
	waitFor(j.t, "Route hello on "+revision, time.Minute, func(ctx context.Context) (bool, string) {
		rt := &servingv1.Route{}
		if err := j.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, rt); err != nil {
			return false, err.Error()
		}
		for _, tt := range rt.Status.Traffic {
			if tt.RevisionName == revision && ptr.Deref(tt.Percent, 0) == 100 {
				return true, ""
			}
		}
		return false, fmt.Sprintf("traffic %+v", rt.Status.Traffic)
	})
}

// mainRevisions are the sorted names of hello's Revisions that are no
// pull request's preview.
func (j *gitopsJourney) mainRevisions() []string {
	j.t.Helper()
	revs := &servingv1.RevisionList{}
	if err := j.c.List(context.Background(), revs, client.InNamespace("default"), client.MatchingLabels{repositoryLabel: "hello", branchLabel: "main"}); err != nil {
		j.t.Fatal(err)
	}
	var names []string
	for _, r := range revs.Items {
		if r.Labels[pullRequestLabel] == "" {
			names = append(names, r.Name)
		}
	}
	slices.Sort(names)
	return names
}

// waitApplied waits for the GitRepository to have applied sha to branch.
func (j *gitopsJourney) waitApplied(branch, sha string) {
	j.t.Helper()
	j.waitCondition(fmt.Sprintf("%s applied at %.7s", branch, sha), func(repo *knitv1alpha1.GitRepository) (bool, string) {
		for _, b := range repo.Status.Branches {
			if b.Name == branch {
				return b.AppliedCommit == sha, fmt.Sprintf("%+v", b)
			}
		}
		return false, fmt.Sprintf("branches %+v", repo.Status.Branches)
	})
}

func (j *gitopsJourney) waitCondition(what string, cond func(*knitv1alpha1.GitRepository) (bool, string)) {
	j.t.Helper()
	waitFor(j.t, what, 2*time.Minute, func(ctx context.Context) (bool, string) {
		repo := &knitv1alpha1.GitRepository{}
		if err := j.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, repo); err != nil {
			return false, err.Error()
		}
		return cond(repo)
	})
}

// waitGone waits for Revision name to be deleted.
func (j *gitopsJourney) waitGone(name string) {
	j.t.Helper()
	waitFor(j.t, "Revision "+name+" deleted", time.Minute, func(ctx context.Context) (bool, string) {
		_, err := j.revision(ctx, name)
		return apierrors.IsNotFound(err), fmt.Sprintf("%v", err)
	})
}

// waitNotFound waits for host to answer 404: no route has it.
func (j *gitopsJourney) waitNotFound(host string) {
	j.t.Helper()
	waitFor(j.t, host+" answers 404", time.Minute, func(context.Context) (bool, string) {
		code, body, err := get(j.d.httpAddr, host)
		return err == nil && code == http.StatusNotFound, fmt.Sprintf("%d %q %v", code, body, err)
	})
}

func (j *gitopsJourney) waitPullRequestDone(number int, reason string) {
	j.t.Helper()
	waitFor(j.t, fmt.Sprintf("pull request %d %s", number, reason), time.Minute, func(ctx context.Context) (bool, string) {
		pr := &knitv1alpha1.PullRequest{}
		if err := j.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: fmt.Sprintf("hello-%d", number)}, pr); err != nil {
			return false, err.Error()
		}
		ready := pr.Status.GetCondition(duckv1.ConditionReady)
		return ready.IsTrue() && ready.Reason == reason && pr.Status.URL == "", fmt.Sprintf("%+v url %q", ready, pr.Status.URL)
	})
}

// answers counts hello's answers over n requests; an error fails the test.
func (j *gitopsJourney) answers(n int) map[string]int {
	j.t.Helper()
	seen := map[string]int{}
	for i := 0; i < n; i++ {
		code, body, err := get(j.d.httpAddr, helloHost)
		if err != nil || code != http.StatusOK {
			j.t.Fatalf("request %d of %d: %d %q %v", i+1, n, code, body, err)
		}
		seen[body]++
	}
	return seen
}

// waitEvent waits for the first event s received that matches.
func (j *gitopsJourney) waitEvent(s *eventSink, what string, match func(knitEvent) bool) knitEvent {
	j.t.Helper()
	return waitForEvent(j.t, s, what, match)
}

// sign is GitHub's X-Hub-Signature-256 of body.
func sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func sorted(names ...string) []string {
	s := slices.Clone(names)
	slices.Sort(s)
	return s
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
