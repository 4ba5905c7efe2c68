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

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/source/sshgittest"
	"github.com/knitops/knit/internal/kofixture"
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

// writeApp writes the build journey's app (package kofixture) into dir.
func (j *journey) writeApp(dir, greeting string, broken bool) {
	j.t.Helper()
	if err := kofixture.WriteApp(dir, "built", greeting, broken); err != nil {
		j.t.Fatal(err)
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
	proxy, err := kofixture.StartModuleProxy(net.JoinHostPort(hostIP, "0"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	j.must("helm", "upgrade", "knit", "charts/knit", "-n", systemNamespace, "--reuse-values", "--wait", "--timeout", "3m",
		"--set", "build.registry="+registry, "--set", "build.insecure=true", "--set", "build.cache.size=1Gi",
		"--set", "build.goproxy="+proxy.URL)
	dir, err := os.MkdirTemp(j.tmp, "build")
	if err != nil {
		t.Fatal(err)
	}
	git := j.gitIn(dir)
	git("init", "-q", "-b", "main")
	j.writeApp(dir, "v1", false)
	if err := kofixture.WriteNonce(dir, time.Now().Format(time.RFC3339Nano)); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-qm", "v1")
	ctx := context.Background()
	// The caches' claim outlives knit: on a cluster kept from an earlier
	// run (KEEP_CLUSTER) the first build finds warm caches.
	// Build Jobs are knit's, not the chart's: they stay for build.ttl
	// after helm uninstall. Drop the journey's so the uninstall step sees
	// knit-system empty.
	t.Cleanup(func() {
		_ = j.c.DeleteAllOf(context.Background(), &batchv1.Job{}, client.InNamespace(systemNamespace),
			client.MatchingLabels{"knit.dev/repository": buildRepo}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	})
	cold := apierrors.IsNotFound(j.c.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: "knit-build-cache"}, &corev1.PersistentVolumeClaim{}))

	// A push of code: built in the cluster, deployed by digest.
	sha1, image1 := j.pushBuilt(git, kofixture.Answer("v1"))
	if !strings.HasPrefix(image1, registry+"/"+ns+"/"+buildRepo+"/hello@sha256:") {
		t.Fatalf("the Service runs %q, want an image of %s by digest", image1, registry)
	}
	if cold && proxy.Requests() == 0 {
		t.Errorf("the cold build fetched nothing through build.goproxy %s", proxy.URL)
	}

	// A code change: a new digest, and the module cache is warm.
	before := proxy.Requests()
	j.writeApp(dir, "v2", false)
	git("commit", "-qam", "v2")
	sha2, image2 := j.pushBuilt(git, kofixture.Answer("v2"))
	if image2 == image1 {
		t.Errorf("a code change kept the image %s", image1)
	}
	if n := proxy.Requests() - before; n != 0 {
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
	j.writeApp(dir, "", true)
	git("commit", "-qam", "broken")
	git("push", "-q", j.gitRepoURL(buildRepo), "main")
	sha4 := git("rev-parse", "HEAD")
	j.waitFor("the broken build reported", 3*time.Minute, func(ctx context.Context) (bool, string) {
		b, repo, err := j.build(ctx, sha4)
		if err != nil || b.Phase != knitv1alpha1.BuildFailed {
			return false, fmt.Sprint(b, err)
		}
		synced := repo.Status.GetCondition(knitv1alpha1.GitRepositoryConditionSynced)
		ok := synced.IsFalse() && strings.Contains(synced.Message, kofixture.BrokenError) &&
			strings.Contains(b.Message, "cmd/hello/main.go")
		return ok, fmt.Sprintf("build %+v; Synced %+v", b, synced)
	})
	if code, body, err := j.get(j.ingress, j.host("built")); err != nil || code != http.StatusOK || body != kofixture.Answer("v2") {
		t.Errorf("after a failed build the Service answers %d %q %v, want v2", code, body, err)
	}
	t.Logf("builds: v1 %.7s, v2 %.7s, same tree %.7s, broken %.7s", sha1, sha2, sha3, sha4)
	j.buildOverSSH(t)
}

// buildOverSSH deploys code from an ssh:// repository with a deploy key:
// the controller fetches it checking known_hosts, and the build Job
// fetches the commit the same way, with knit-builder as git's SSH client
// and the copy of the key beside the Job.
func (j *journey) buildOverSSH(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	app := filepath.Join(root, "app")
	if err := kofixture.WriteApp(app, "ssh", "ssh", false); err != nil { // Service ssh, beside the journey's built
		t.Fatal(err)
	}
	git := j.gitIn(app)
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-qm", "over ssh")
	identity, public := sshgittest.NewKey(t)
	srv := sshgittest.NewOn(t, net.JoinHostPort(hostIP, "0"), root, public)
	const repo = "journey-ssh"
	t.Cleanup(func() {
		_ = j.c.DeleteAllOf(context.Background(), &batchv1.Job{}, client.InNamespace(systemNamespace),
			client.MatchingLabels{"knit.dev/repository": repo}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	})
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: repo, Labels: map[string]string{"knit.dev/git-credentials": "true"}}, Data: map[string][]byte{
			"identity": identity, "known_hosts": []byte(srv.KnownHosts())}},
		&knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: repo}, Spec: knitv1alpha1.GitRepositorySpec{
			URL: "ssh://git@" + srv.Addr + "/app", SecretRef: &corev1.LocalObjectReference{Name: repo}, Interval: metav1.Duration{Duration: time.Hour}}},
	} {
		if err := j.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	began := time.Now()
	j.waitBody(j.ingress, j.host("ssh"), kofixture.Answer("ssh"), 4*time.Minute)
	svc, err := j.service(ctx, ns, "ssh")
	if err != nil {
		t.Fatal(err)
	}
	if image := svc.Spec.Template.Spec.Containers[0].Image; !strings.HasPrefix(image, registry+"/"+ns+"/"+repo+"/hello@sha256:") {
		t.Errorf("the Service runs %q, want the build Job's image by digest", image)
	}
	t.Logf("ssh:// repository with a deploy key: push → serving %s (the controller's and the build Job's fetches over SSH: %d authentications)",
		time.Since(began).Round(10*time.Millisecond), srv.Attempts.Load())
	if err := j.c.Delete(ctx, &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: repo}}); err != nil {
		t.Error(err)
	}
}
