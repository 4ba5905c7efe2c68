//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/gitea"
	"github.com/knitops/knit/internal/httpload"
)

// TestForgeJourney is a pull request's rollout on a real forge: Gitea
// built from source, knit dev, the git CLI. The forge hears back (a
// knit/preview status and one comment, edited in place; knit/deploy on
// each head of main once it serves), a good canary is
// promoted step by step under load, a bad one (5xx on some paths) is
// rolled back with the numbers on the PR and a CloudEvent, merging
// promotes the good change on main, and a bad push to main with a
// stepped rollout is rolled back to the Revision before, with knit/deploy
// failure on its commit and a CloudEvent.
func TestForgeJourney(t *testing.T) {
	forge := gitea.Start(t, gitea.Options{})
	t.Logf("Gitea %s ready in %s", forge.Version, forge.Ready.Round(time.Millisecond))
	d := startKnitDev(t, filepath.Join(t.TempDir(), "state"))
	j := &forgeJourney{t: t, d: d, c: d.client(t), sink: startEventSink(t)}
	// The work tree outlives the steps; each step is its test.
	j.app = newGitWorkTree(t, filepath.Join(repoRoot, "examples", "gitops-hello"), "Hello, forge")
	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"a Gitea repository deploys through its webhook", j.setup},
		{"a pull request shows knit/preview and one comment", j.preview},
		{"a good canary is promoted step by step under load", j.goodCanary},
		{"a bad canary is rolled back, says why on the PR and as a CloudEvent", j.badCanary},
		{"merging promotes the change on main; closing removes the bad preview", j.merge},
		{"a push to main whose Revision fails a rollout step is rolled back", j.badPush},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { j.t, j.app.t, j.forge = t, t, forge.With(t); s.run(t) }) {
			t.Fatalf("stopping: %q failed\nknit dev output (tail):\n%s", s.name, tail(d.output.String(), 80))
		}
	}
	for _, line := range j.timeline {
		t.Log(line)
	}
}

type forgeJourney struct {
	t        *testing.T
	d        *knitDev
	c        client.Client
	forge    *gitea.Server // failing the running step (Server.With)
	sink     *eventSink
	app      *gitWorkTree
	good     int64 // pull request numbers
	bad      int64
	timeline []string
}

const (
	forgeRepo   = "hello"
	forgeSecret = "journey-gitea-secret"
	// The plan, in the description as a user writes it; short steps.
	canaryLine = "knit: canary 20,50 every 8s"
)

func (j *forgeJourney) setup(t *testing.T) {
	ctx := context.Background()
	j.forge.CreateRepo(forgeRepo)
	j.app.git("push", "--quiet", j.forge.CloneURL(forgeRepo), "main")
	// Gitea and the sink listen on loopback: the operator allows them.
	allowEgress(t, j.c, strings.TrimPrefix(j.forge.URL, "http://"), j.sink.addr())
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gitea", Labels: map[string]string{"knit.dev/git-credentials": "true"}}, Data: map[string][]byte{
			"username": []byte(j.forge.User), "password": []byte(j.forge.Token), "webhookSecret": []byte(forgeSecret),
		}},
		&knitv1alpha1.EventSink{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "canaries"},
			Spec: knitv1alpha1.EventSinkSpec{URI: j.sink.URL(), Types: []string{"dev.knit.canary.failed", "dev.knit.rollout.failed"}}},
		&knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: forgeRepo}, Spec: knitv1alpha1.GitRepositorySpec{
			URL: j.forge.URL + "/" + j.forge.User + "/" + forgeRepo + ".git", Provider: knitv1alpha1.GitProviderGitea,
			SecretRef: &corev1.LocalObjectReference{Name: "gitea"}, Interval: metav1.Duration{Duration: time.Hour},
		}},
	}
	for _, o := range objs {
		if err := j.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	j.forge.CreateWebhook(forgeRepo, "http://"+j.d.gitAddr+"/hooks/gitea/default/"+forgeRepo, forgeSecret, "push", "pull_request")
	began := time.Now()
	waitBody(t, j.d.httpAddr, helloHost, "Hello GitOps!", 3*time.Minute)
	head := strings.TrimSpace(j.app.git("rev-parse", "main"))
	st := j.waitDeployed(head)
	j.log(began, "main at %.7s: knit/deploy success (%q), target %s", head, st.Description, st.TargetURL)
}

// waitDeployed waits for knit/deploy success on sha, a head of main,
// and checks it links to Service hello's URL and was told once.
func (j *forgeJourney) waitDeployed(sha string) gitea.Status {
	j.t.Helper()
	st := j.waitStatus(sha, "knit/deploy", "success", 3*time.Minute)
	svc := &servingv1.Service{}
	if err := j.c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "hello"}, svc); err != nil {
		j.t.Fatal(err)
	}
	if svc.Status.URL == "" || st.TargetURL != svc.Status.URL {
		j.t.Errorf("knit/deploy success links to %q, want Service hello's URL %q", st.TargetURL, svc.Status.URL)
	}
	all, err := j.forge.Statuses(forgeRepo, sha)
	if err != nil {
		j.t.Fatal(err)
	}
	told := map[string]int{}
	for _, s := range all {
		if s.Context == "knit/deploy" {
			told[s.State]++
		}
	}
	for state, n := range told {
		if n != 1 {
			j.t.Errorf("knit/deploy %s told %d times on %.7s, want once: %+v", state, n, sha, all)
		}
	}
	return st
}

// openPR pushes a branch changed by edit and opens a pull request for it
// with the canary line; it returns the number, the head and when it opened.
func (j *forgeJourney) openPR(branch, title string, edit func()) (int64, string, time.Time) {
	j.t.Helper()
	j.app.git("checkout", "--quiet", "-B", branch, "main")
	edit()
	head := j.app.commitAll(title)
	j.app.git("push", "--quiet", "--force", j.forge.CloneURL(forgeRepo), branch)
	opened := time.Now()
	n := j.forge.CreatePullRequest(forgeRepo, branch, "main", title, "Tried by the forge journey.\n\n"+canaryLine)
	j.app.git("checkout", "--quiet", "main")
	return n, head, opened
}

// status is the newest knit status of statusContext on sha.
func (j *forgeJourney) status(sha, statusContext string) (gitea.Status, bool) {
	all, err := j.forge.Statuses(forgeRepo, sha)
	if err != nil {
		return gitea.Status{}, false
	}
	var newest gitea.Status
	found := false
	for _, s := range all {
		if s.Context == statusContext && (!found || s.ID > newest.ID) {
			newest, found = s, true
		}
	}
	return newest, found
}

func (j *forgeJourney) waitStatus(sha, statusContext, state string, timeout time.Duration) gitea.Status {
	j.t.Helper()
	var st gitea.Status
	waitFor(j.t, fmt.Sprintf("%s %s on %.7s", statusContext, state, sha), timeout, func(context.Context) (bool, string) {
		var ok bool
		st, ok = j.status(sha, statusContext)
		return ok && st.State == state, fmt.Sprintf("%+v", st)
	})
	return st
}

// knitComments are the comments knit wrote on pull request n.
func (j *forgeJourney) knitComments(n int64) []gitea.Comment {
	all, err := j.forge.Comments(forgeRepo, n)
	if err != nil {
		j.t.Fatal(err)
	}
	var ours []gitea.Comment
	for _, c := range all {
		if strings.HasPrefix(c.Body, "<!-- knit:preview -->") {
			ours = append(ours, c)
		}
	}
	return ours
}

func (j *forgeJourney) preview(t *testing.T) {
	n, head, opened := j.openPR("good", "Greet the canary", func() {
		j.app.replace("service.yaml", "value: GitOps", "value: canary")
	})
	j.good = n
	pending := j.waitStatus(head, "knit/preview", "pending", time.Minute)
	j.log(opened, "PR #%d opened; knit/preview pending visible (%q)", n, pending.Description)
	ok := j.waitStatus(head, "knit/preview", "success", 3*time.Minute)
	j.log(opened, "knit/preview success, target %s", ok.TargetURL)
	if want := fmt.Sprintf("http://pr-%d-hello.default.localhost", n); !strings.HasPrefix(ok.TargetURL, want) {
		t.Errorf("preview status target %q, want the tag URL %s…", ok.TargetURL, want)
	}
	waitFor(t, "one knit comment naming the preview", time.Minute, func(context.Context) (bool, string) {
		cs := j.knitComments(n)
		return len(cs) == 1 && strings.Contains(cs[0].Body, ok.TargetURL) && strings.Contains(cs[0].Body, head[:7]),
			fmt.Sprintf("%d comments: %v", len(cs), cs)
	})
}

// pullRequest reads knit's PullRequest for number n.
func (j *forgeJourney) pullRequest(ctx context.Context, n int64) (*knitv1alpha1.PullRequest, error) {
	pr := &knitv1alpha1.PullRequest{}
	return pr, j.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: fmt.Sprintf("%s-%d", forgeRepo, n)}, pr)
}

// watchCanary waits for the canary of n to reach phase, logging every
// step, share and verdict it passes through.
func (j *forgeJourney) watchCanary(n int64, since time.Time, phase knitv1alpha1.CanaryPhase) *knitv1alpha1.PullRequest {
	j.t.Helper()
	var pr *knitv1alpha1.PullRequest
	last := ""
	waitFor(j.t, fmt.Sprintf("PR #%d canary %s", n, phase), 3*time.Minute, func(ctx context.Context) (bool, string) {
		var err error
		if pr, err = j.pullRequest(ctx, n); err != nil || pr.Status.Canary == nil {
			return false, fmt.Sprint("no canary yet ", err)
		}
		c := pr.Status.Canary
		now := fmt.Sprintf("%s step %d/%d share %d%% verdict %s: %s", c.Phase, c.Step, len(c.Steps), pr.Status.Share, c.Verdict, c.Message)
		if now != last {
			j.log(since, "PR #%d canary %s", n, now)
			last = now
		}
		return c.Phase == phase, now
	})
	return pr
}

func (j *forgeJourney) goodCanary(t *testing.T) {
	began := time.Now()
	load := httpload.Start(http.DefaultClient, "http://"+j.d.httpAddr+"/", helloHost, 2, 3*time.Minute)
	defer load.Stop()
	pr := j.watchCanary(j.good, began, knitv1alpha1.CanaryPromoted)
	res := load.Stop()
	if res.Failed != 0 {
		t.Errorf("%d of %d requests failed during the good canary: %q", res.Failed, res.Sent, res.Failures)
	}
	if pr.Status.Share != 50 {
		t.Errorf("share after promotion = %d%%, want the last step's 50%%", pr.Status.Share)
	}
	head := j.app.git("rev-parse", "good")
	st := j.waitStatus(strings.TrimSpace(head), "knit/canary", "success", time.Minute)
	j.log(began, "knit/canary success: %q", st.Description)
	if cs := j.knitComments(j.good); len(cs) != 1 || !strings.Contains(cs[0].Body, "Promoted") {
		t.Errorf("knit's comments after promotion: %v, want one, edited in place, saying Promoted", cs)
	}
}

func (j *forgeJourney) badCanary(t *testing.T) {
	n, head, opened := j.openPR("bad", "Orders are broken", func() {
		j.app.replace("cmd/hello/main.go", `		fmt.Fprintf(w, "Hello %s!\n", target)`,
			`		if r.URL.Path == "/orders" {
			http.Error(w, "orders are down", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "Hello %s!\n", target)`)
	})
	j.bad = n
	j.waitStatus(head, "knit/preview", "success", 3*time.Minute)
	// Traffic on two paths: the stable revision answers both, the canary
	// fails one.
	loads := []*httpload.Load{
		httpload.Start(http.DefaultClient, "http://"+j.d.httpAddr+"/", helloHost, 1, 3*time.Minute),
		httpload.Start(http.DefaultClient, "http://"+j.d.httpAddr+"/orders", helloHost, 1, 3*time.Minute),
	}
	defer func() {
		for _, l := range loads {
			l.Stop()
		}
	}()
	pr := j.watchCanary(n, opened, knitv1alpha1.CanaryRolledBack)
	for _, l := range loads {
		l.Stop()
	}
	if pr.Status.Share != 0 || !strings.Contains(pr.Status.Canary.Message, "5xx") {
		t.Errorf("after rollback: share %d%%, message %q; want 0%% and the 5xx numbers", pr.Status.Share, pr.Status.Canary.Message)
	}
	if c := pr.Status.GetCondition(knitv1alpha1.PullRequestConditionCanary); !c.IsFalse() || c.Reason != "RolledBack" {
		t.Errorf("Canary condition %+v, want False RolledBack", c)
	}
	st := j.waitStatus(head, "knit/canary", "failure", time.Minute)
	j.log(opened, "knit/canary failure: %q", st.Description)
	waitFor(t, "the comment says why", time.Minute, func(context.Context) (bool, string) {
		cs := j.knitComments(n)
		return len(cs) == 1 && strings.Contains(cs[0].Body, "RolledBack") && strings.Contains(cs[0].Body, "5xx"), fmt.Sprint(cs)
	})
	ev := waitForEvent(t, j.sink, "dev.knit.canary.failed for PR #"+fmt.Sprint(n), ofType("dev.knit.canary.failed", fmt.Sprintf("default/%s-%d", forgeRepo, n)))
	if ev.Data.Failure == nil || !strings.Contains(ev.Data.Failure.Message, "5xx") || ev.Data.Commit != head {
		t.Errorf("canary.failed event %+v, want the commit and the 5xx numbers", ev.Data)
	}
	// Rolled back: the route drops the canary, after which every /orders
	// request is answered by the stable revision.
	rolledBack := pr.Status.Canary.LastAnalysis.Time
	waitFor(t, "50 requests in a row to /orders answered by the stable revision", time.Minute, func(context.Context) (bool, string) {
		for i := range 50 {
			if code, body, err := getPath(j.d.httpAddr, helloHost, "/orders"); err != nil || code != http.StatusOK {
				return false, fmt.Sprintf("request %d: %d %q %v", i, code, body, err)
			}
		}
		return true, ""
	})
	j.log(opened, "the base route no longer sends the canary traffic (at most %s after the rollback was decided)", time.Since(rolledBack).Round(time.Millisecond))
	out, err := j.d.kubectl(t, "get", "pr", fmt.Sprintf("%s-%d", forgeRepo, n))
	if err != nil || !strings.Contains(out, "PHASE") || !strings.Contains(out, "VERDICT") || !strings.Contains(out, "RolledBack") {
		t.Errorf("kubectl get pr: %v\n%s\nwant its phase, step, share and verdict", err, out)
	}

	// A later push restarts the analysis, and the one comment follows it.
	j.app.git("checkout", "--quiet", "bad")
	j.app.replace("cmd/hello/main.go", `"orders are down"`, `"orders are back"`)
	fixed := j.app.commitAll("Still broken, differently")
	j.app.git("push", "--quiet", j.forge.CloneURL(forgeRepo), "bad")
	j.app.git("checkout", "--quiet", "main")
	waitFor(t, "the canary restarts for the new head", 3*time.Minute, func(ctx context.Context) (bool, string) {
		pr, err := j.pullRequest(ctx, n)
		if err != nil || pr.Status.Canary == nil {
			return false, fmt.Sprint(err)
		}
		c := pr.Status.Canary
		return c.Commit == fixed && c.Phase == knitv1alpha1.CanaryProgressing, fmt.Sprintf("%+v", c)
	})
	j.log(opened, "push %.7s to PR #%d: the canary restarted", fixed, n)
	waitFor(t, "still one comment, now naming the new head", time.Minute, func(context.Context) (bool, string) {
		cs := j.knitComments(n)
		return len(cs) == 1 && strings.Contains(cs[0].Body, fixed), fmt.Sprint(cs)
	})
}

func (j *forgeJourney) merge(t *testing.T) {
	merged := time.Now()
	j.forge.MergePullRequest(forgeRepo, j.good)
	waitBody(t, j.d.httpAddr, helloHost, "Hello canary!", 3*time.Minute)
	j.log(merged, "merged PR #%d: main answers Hello canary!", j.good)
	head := j.forge.BranchCommit(forgeRepo, "main")
	st := j.waitDeployed(head)
	j.log(merged, "main at %.7s (the merge): knit/deploy success (%q)", head, st.Description)
	j.forge.ClosePullRequest(forgeRepo, j.bad)
	waitFor(t, "the bad PR closed in knit", time.Minute, func(ctx context.Context) (bool, string) {
		pr, err := j.pullRequest(ctx, j.bad)
		if err != nil {
			return false, err.Error()
		}
		ready := pr.Status.GetCondition(duckv1.ConditionReady)
		return pr.Spec.State == knitv1alpha1.PullRequestClosed && ready.IsTrue() && pr.Status.URL == "", fmt.Sprintf("%s %+v", pr.Spec.State, ready)
	})
}

// badPush pushes to main a commit that asks for a stepped rollout and
// breaks /orders: its first step sends it a fifth of the traffic, the
// analysis fails it, all traffic goes back to the Revision before, and
// the commit, the repository and the user's sinks say so with the
// numbers. The timeline shows each moment.
func (j *forgeJourney) badPush(t *testing.T) {
	ctx := context.Background()
	stable := j.latestReady(ctx)
	j.app.git("pull", "--quiet", "--ff-only", j.forge.CloneURL(forgeRepo), "main")
	j.app.replace("service.yaml", "  name: hello\n", "  name: hello\n  annotations:\n    knit.dev/rollout: \"20 every 8s\"\n")
	j.app.replace("cmd/hello/main.go", `		fmt.Fprintf(w, "Hello %s!\n", target)`,
		`		if r.URL.Path == "/orders" {
			http.Error(w, "orders are down", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "Hello %s!\n", target)`)
	head := j.app.commitAll("Roll out broken orders")
	pushed := time.Now()
	j.app.git("push", "--quiet", j.forge.CloneURL(forgeRepo), "main")
	j.log(pushed, "push %.7s to main with knit.dev/rollout \"20 every 8s\"; %s serves", head, stable)
	loads := []*httpload.Load{
		httpload.Start(http.DefaultClient, "http://"+j.d.httpAddr+"/", helloHost, 1, 3*time.Minute),
		httpload.Start(http.DefaultClient, "http://"+j.d.httpAddr+"/orders", helloHost, 1, 3*time.Minute),
	}
	defer func() {
		for _, l := range loads {
			l.Stop()
		}
	}()
	candidate := "hello-" + head[:7]
	ro := j.waitRollout(candidate, pushed)
	for _, l := range loads {
		l.Stop()
	}
	if ro.Stable != stable || ro.Verdict != "Fail" || !strings.Contains(ro.Message, "5xx") {
		t.Errorf("rollout %+v, want %s rolled back to %s with the 5xx numbers", ro, candidate, stable)
	}
	st := j.waitStatus(head, "knit/deploy", "failure", time.Minute)
	if !strings.Contains(st.Description, candidate+" rolled back") {
		t.Errorf("knit/deploy failure %q, want the rollback of %s", st.Description, candidate)
	}
	j.log(pushed, "knit/deploy failure on %.7s: %q", head, st.Description)
	ev := waitForEvent(t, j.sink, "dev.knit.rollout.failed", ofType("dev.knit.rollout.failed", "default/hello"))
	if ev.Data.Failure == nil || !strings.Contains(ev.Data.Failure.Message, "5xx") || ev.Data.Commit != head || ev.Data.Revision != candidate {
		t.Errorf("rollout.failed event %+v, want the commit, the Revision and the 5xx numbers", ev.Data)
	}
	rolledBack := ro.LastAnalysis.Time
	waitFor(t, "50 requests in a row to /orders answered by the Revision before", time.Minute, func(context.Context) (bool, string) {
		for i := range 50 {
			if code, body, err := getPath(j.d.httpAddr, helloHost, "/orders"); err != nil || code != http.StatusOK {
				return false, fmt.Sprintf("request %d: %d %q %v", i, code, body, err)
			}
		}
		return true, ""
	})
	j.log(pushed, "the route no longer sends %s traffic (at most %s after the rollback was decided)", candidate, time.Since(rolledBack).Round(time.Millisecond))
	repo := &knitv1alpha1.GitRepository{}
	if err := j.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: forgeRepo}, repo); err != nil {
		t.Fatal(err)
	}
	if c := repo.Status.GetCondition(knitv1alpha1.GitRepositoryConditionRollouts); !c.IsFalse() || c.Reason != knitv1alpha1.ReasonRolloutFailed {
		t.Errorf("Rollouts condition %+v, want False RolloutFailed", c)
	}
}

// latestReady is Service hello's latest ready Revision.
func (j *forgeJourney) latestReady(ctx context.Context) string {
	j.t.Helper()
	svc := &servingv1.Service{}
	if err := j.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, svc); err != nil {
		j.t.Fatal(err)
	}
	return svc.Status.LatestReadyRevisionName
}

// waitRollout waits for the rollout of candidate to be rolled back,
// logging each phase and step it passes through.
func (j *forgeJourney) waitRollout(candidate string, since time.Time) knitv1alpha1.RolloutStatus {
	j.t.Helper()
	var ro knitv1alpha1.RolloutStatus
	seen := ""
	waitFor(j.t, "the rollout of "+candidate+" rolled back", 3*time.Minute, func(ctx context.Context) (bool, string) {
		repo := &knitv1alpha1.GitRepository{}
		if err := j.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: forgeRepo}, repo); err != nil {
			return false, err.Error()
		}
		for _, r := range repo.Status.Rollouts {
			if r.Revision != candidate {
				continue
			}
			ro = r
			if now := fmt.Sprintf("%s step %d (%d%%)", r.Phase, r.Step, r.Percent); now != seen {
				seen = now
				j.log(since, "rollout of %s: %s %s", candidate, now, r.Message)
			}
			return r.Phase == knitv1alpha1.CanaryRolledBack, fmt.Sprintf("%+v", r)
		}
		return false, fmt.Sprintf("no rollout of %s in %+v", candidate, repo.Status.Rollouts)
	})
	return ro
}

// log adds a line to the journey's timeline, timed from since.
func (j *forgeJourney) log(since time.Time, format string, args ...any) {
	j.timeline = append(j.timeline, fmt.Sprintf("+%6.1fs  ", time.Since(since).Seconds())+fmt.Sprintf(format, args...))
}
