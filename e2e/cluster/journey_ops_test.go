//go:build cluster

package cluster

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/hub"
	"github.com/knitops/knit/internal/httpload"
)

func (j *journey) steadyLoad(t *testing.T) {
	host := j.host("hello")
	l := httpload.Start(j.http, "http://"+j.ingress+"/", host, 4, 3*time.Minute)
	defer l.Stop()
	j.waitFor("load flowing", 30*time.Second, func(context.Context) (bool, string) {
		return l.Sent() > 50, fmt.Sprintf("%d sent", l.Sent())
	})
	// A rollout under load.
	j.apply(helloService("v3"))
	rev := j.waitServiceReady(ns, "hello", j.revisions[1], 3*time.Minute)
	j.revisions = append(j.revisions, rev)
	j.waitBody(j.ingress, host, "Hello v3!", time.Minute)
	// One activator and one ingress pod go away, as in a node drain, and
	// one controller: the data plane never waits for the controllers, so
	// a restart of theirs (the leader hands its Lease over on SIGTERM)
	// fails no request either.
	for _, name := range []string{"knit-activator", "knit-ingress", "knit-controller"} {
		j.deleteOnePod(name)
	}
	r := l.Stop()
	t.Logf("steady load: %d requests, %d failed", r.Sent, r.Failed)
	if r.Sent < 100 || r.Failed != 0 {
		t.Fatalf("%d of %d requests failed across the rollout and pod deletions; first: %q", r.Failed, r.Sent, r.Failures)
	}
}

// deleteOnePod deletes one ready pod of a knit Deployment and waits until
// the Deployment is back to all replicas available.
func (j *journey) deleteOnePod(name string) {
	j.t.Helper()
	ctx := context.Background()
	pods, err := j.pods(ctx, systemNamespace, map[string]string{"app.kubernetes.io/name": name})
	if err != nil || readyPods(pods) < 2 {
		j.t.Fatalf("%s: %v, %d ready", name, err, readyPods(pods))
	}
	victim := pods[0]
	j.t.Logf("Deleting pod %s", victim.Name)
	if err := j.c.Delete(ctx, &victim); err != nil {
		j.t.Fatal(err)
	}
	j.waitFor(name+" back to full strength", 3*time.Minute, func(ctx context.Context) (bool, string) {
		d := &appsv1.Deployment{}
		if err := j.c.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: name}, d); err != nil {
			return false, err.Error()
		}
		pods, err := j.pods(ctx, systemNamespace, map[string]string{"app.kubernetes.io/name": name})
		if err != nil {
			return false, err.Error()
		}
		gone := true
		for _, p := range pods {
			gone = gone && p.UID != victim.UID
		}
		return gone && readyPods(pods) == int(*d.Spec.Replicas), fmt.Sprintf("%d of %d ready, old pod gone: %v", readyPods(pods), *d.Spec.Replicas, gone)
	})
}

// leader is the pod holding a component's Lease.
func (j *journey) leader(ctx context.Context, lease string) (string, error) {
	l := &coordinationv1.Lease{}
	if err := j.c.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: lease}, l); err != nil {
		return "", err
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return "", fmt.Errorf("lease %s is not held", lease)
	}
	pod, _, _ := strings.Cut(*l.Spec.HolderIdentity, "_")
	return pod, nil
}

func (j *journey) leaderFailover(t *testing.T) {
	ctx := context.Background()
	old, err := j.leader(ctx, "knit-controller")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Deleting the controller leader %s", old)
	if err := j.c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: systemNamespace, Name: old}}); err != nil {
		t.Fatal(err)
	}
	j.waitFor("another controller leads", 2*time.Minute, func(ctx context.Context) (bool, string) {
		now, err := j.leader(ctx, "knit-controller")
		return err == nil && now != old, fmt.Sprintf("leader %q %v", now, err)
	})
	j.apply(helloService("v4"))
	rev := j.waitServiceReady(ns, "hello", j.revisions[2], 3*time.Minute)
	j.revisions = append(j.revisions, rev)
	j.waitBody(j.ingress, j.host("hello"), "Hello v4!", time.Minute)
}

// gitRepoURL is the in-cluster Git server as the host reaches it, with
// its token (made by the gitserver on its first start) as the password.
func (j *journey) gitRepoURL(repo string) string {
	j.t.Helper()
	secret := hub.TokenSecret{Reader: j.c, Key: client.ObjectKey{Namespace: systemNamespace, Name: hub.DefaultTokenSecret}}
	token, err := secret.Token(context.Background())
	if err != nil {
		j.t.Fatal(err)
	}
	return "http://knit:" + token + "@" + j.serviceAddr("knit-gitserver") + "/git/" + repo + ".git"
}

// worktree makes a Git work tree holding a Knative Service gitops that
// greets target, committed.
func (j *journey) worktree(target string) (dir string, git func(args ...string) string) {
	dir, err := os.MkdirTemp(j.tmp, "worktree")
	if err != nil {
		j.t.Fatal(err)
	}
	git = j.gitIn(dir)
	git("init", "-q", "-b", "main")
	j.writeGitops(dir, target)
	git("add", ".")
	git("commit", "-qm", "Hello "+target)
	return dir, git
}

// gitIn runs the git CLI in dir as a user with no global configuration.
func (j *journey) gitIn(dir string) func(args ...string) string {
	return func(args ...string) string {
		j.t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com",
			"GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			j.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
}

func (j *journey) writeGitops(dir, target string) {
	j.t.Helper()
	files := map[string]string{
		"kustomization.yaml": "resources:\n  - service.yaml\n",
		"service.yaml": fmt.Sprintf(`apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: gitops
spec:
  template:
    spec:
      containers:
        - image: %s
          env:
            - name: TARGET
              value: %s
`, helloImage, target),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			j.t.Fatal(err)
		}
	}
}

// appliedCommit is what a GitRepository has applied of main.
func (j *journey) appliedCommit(ctx context.Context, key client.ObjectKey) (string, error) {
	repo := &knitv1alpha1.GitRepository{}
	if err := j.c.Get(ctx, key, repo); err != nil {
		return "", err
	}
	for _, b := range repo.Status.Branches {
		if b.Name == "main" {
			return b.AppliedCommit, nil
		}
	}
	return "", fmt.Errorf("main not applied yet: %+v", repo.Status)
}

func (j *journey) waitApplied(key client.ObjectKey, sha string) {
	j.t.Helper()
	j.waitFor(fmt.Sprintf("%s applied %.7s", key, sha), 3*time.Minute, func(ctx context.Context) (bool, string) {
		got, err := j.appliedCommit(ctx, key)
		return err == nil && got == sha, fmt.Sprintf("%q %v", got, err)
	})
}

func (j *journey) gitPush(t *testing.T) {
	dir, git := j.worktree("GitOps")
	git("push", "-q", "--force", j.gitRepoURL("journey-hello"), "main")
	sha := git("rev-parse", "HEAD")
	j.waitApplied(client.ObjectKey{Namespace: ns, Name: "journey-hello"}, sha)
	rev := j.waitServiceReady(ns, "gitops", "", 3*time.Minute)
	if want := "gitops-" + sha[:7]; rev != want {
		t.Errorf("revision of the pushed commit = %s, want %s", rev, want)
	}
	j.waitBody(j.ingress, j.host("gitops"), "Hello GitOps!", time.Minute)
	j.gitDir, j.gitSHA = dir, sha
}

func sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// hooksRepo is the webhook journey's repository on knit's Git server,
// assigned to the journey's -hooks namespace at install: only
// GitRepositories there may fetch it with the server's token.
const hooksRepo = "journey-hooks"

// webhook: in the namespace that owns hooksRepo, a GitRepository follows
// it by its URL without .git, with a long interval, so pushes do not wake
// it; only a signed forge webhook to the Git server moves it to the pushed
// commit. The GitRepository the Git server itself tracks for hooksRepo is
// made first and suspended, so the server's own push notification syncs
// nothing and the webhook's effect is seen alone.
func (j *journey) webhook(t *testing.T) {
	ctx := context.Background()
	hooks := ns + "-hooks"
	secret := []byte("journey-webhook-secret")
	key := client.ObjectKey{Namespace: hooks, Name: "hooked"}
	base := "http://knit-gitserver.knit-system.svc:8090/git/" + hooksRepo
	tracked := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: hooks, Name: hooksRepo}, Spec: knitv1alpha1.GitRepositorySpec{
		URL: base + ".git", Suspend: true,
	}}
	if err := j.c.Create(ctx, tracked); err != nil {
		t.Fatal(err)
	}
	// The journey's commit, pushed to the owned repository before anything
	// fetches it.
	j.gitIn(j.gitDir)("push", "-q", j.gitRepoURL(hooksRepo), "main")
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: hooks, Name: "hook-secret", Labels: map[string]string{"knit.dev/git-credentials": "true"}}, Data: map[string][]byte{"webhookSecret": secret}},
		&knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: hooks, Name: "hooked"}, Spec: knitv1alpha1.GitRepositorySpec{
			URL:       base,
			Interval:  metav1.Duration{Duration: time.Hour},
			SecretRef: &corev1.LocalObjectReference{Name: "hook-secret"},
		}},
	}
	for _, o := range objs {
		if err := j.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	j.waitApplied(key, j.gitSHA) // a new GitRepository fetches at once

	j.writeGitops(j.gitDir, "webhook")
	git := j.gitIn(j.gitDir)
	git("commit", "-qam", "Hello webhook")
	git("push", "-q", j.gitRepoURL(hooksRepo), "main")
	sha := git("rev-parse", "HEAD")

	body := fmt.Appendf(nil, `{"kind":"push","repo":%q,"branch":"main","sha":%q,"author":"Ada","message":"Hello webhook"}`, key.String(), sha)
	url := "http://" + j.serviceAddr("knit-gitserver") + "/hooks/generic/" + hooks + "/hooked"
	post := func(signature, delivery string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Knit-Delivery", delivery)
		if signature != "" {
			req.Header.Set("X-Knit-Signature-256", signature)
		}
		resp, err := j.http.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, strings.TrimSpace(b.String())
	}
	if code, msg := post("", "unsigned"); code != http.StatusUnauthorized {
		t.Errorf("unsigned webhook: %d %s, want 401", code, msg)
	}
	if code, msg := post(sign(secret, body), "signed"); code/100 != 2 {
		t.Fatalf("signed webhook: %d %s, want 2xx", code, msg)
	}
	repo := &knitv1alpha1.GitRepository{}
	if err := j.c.Get(ctx, key, repo); err != nil || repo.Annotations[hub.RequestedAtAnnotation] == "" {
		t.Errorf("the Git server did not ask the controller for a sync (%s): %v %v", hub.RequestedAtAnnotation, repo.Annotations, err)
	}
	j.waitApplied(key, sha)
	j.waitBody(j.ingress, "gitops."+hooks+"."+domain, "Hello webhook!", 2*time.Minute)
}

func (j *journey) uninstall(t *testing.T) {
	j.must("helm", "uninstall", "knit", "-n", systemNamespace, "--wait", "--timeout", "3m")
	j.waitFor("no knit pods", 2*time.Minute, func(ctx context.Context) (bool, string) {
		pods := &corev1.PodList{}
		if err := j.c.List(ctx, pods, client.InNamespace(systemNamespace)); err != nil {
			return false, err.Error()
		}
		names := make([]string, 0, len(pods.Items))
		for _, p := range pods.Items {
			names = append(names, p.Name)
		}
		return len(names) == 0, strings.Join(names, ", ")
	})
	ctx := context.Background()
	for _, name := range []string{ns, ns + "-hooks"} {
		if err := j.c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Error(err)
		}
	}
}
