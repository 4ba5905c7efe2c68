//go:build !unit

package build

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/api"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/githubapp"
	"github.com/knitops/knit/gitsync/githubapp/githubapptest"
	"github.com/knitops/knit/internal/testapi"
)

// k8s is a client of a real API server (envtest); set up by TestMain
// without one.
var k8s client.Client

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	flag.Parse()
	cfg, stop, err := testapi.Start()
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
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// newBuilder is a Builder in a fresh namespace of the API server, with the
// repository's namespace beside it.
func newBuilder(t *testing.T) (*Builder, string) {
	t.Helper()
	ctx := context.Background()
	var names []string
	for range 2 {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "build-"}}
		if err := k8s.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
		names = append(names, ns.Name)
	}
	b, err := New(k8s, k8s, Config{
		Namespace: names[0], Toolchain: "knit.local/knit-toolchain:dev", Registry: "10.250.0.2:5000", Insecure: true,
		CacheClaim: "knit-build-cache", CacheSize: "1Gi", ServiceAccount: "knit-builder", Memory: "512Mi",
	})
	if err != nil {
		t.Fatal(err)
	}
	return b, names[1]
}

func request(namespace string) Request {
	return Request{Namespace: namespace, Repository: "shop", URL: "http://git.example/shop.git",
		Commit: strings.Repeat("c", 40), Tree: strings.Repeat("e", 40), Image: "ko://./cmd/hello"}
}

// finish does what the Job controller and the kubelet would: a pod of the
// Job that terminated with message, and the Job's final conditions.
func finish(t *testing.T, job *batchv1.Job, failed bool, message string) {
	t.Helper()
	ctx := context.Background()
	if message != "" {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-x", Namespace: job.Namespace, Labels: map[string]string{batchv1.JobNameLabel: job.Name}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: containerLog, Image: "x"}}, RestartPolicy: corev1.RestartPolicyNever},
		}
		if err := k8s.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		exit := int32(0)
		if failed {
			exit = 1
		}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: containerLog, Image: "x", ImageID: "x",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Message: message}}}}
		if err := k8s.Status().Update(ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	now := metav1.Now()
	job.Status.StartTime = &now
	if failed {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded", Message: "Job was active longer than specified deadline", LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded", Message: "Job was active longer than specified deadline", LastTransitionTime: now},
		}
	} else {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
	}
	if err := k8s.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
}

func getJob(t *testing.T, b *Builder, st knitv1alpha1.BuildStatus) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	ns, name, _ := strings.Cut(st.Job, "/")
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
		t.Fatal(err)
	}
	if ns != b.Namespace() {
		t.Errorf("the Job runs in %s, want the build namespace %s", ns, b.Namespace())
	}
	return job
}

func TestBuilderRunsAJobAndReadsItsResult(t *testing.T) {
	b, repoNS := newBuilder(t)
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "git-creds", Namespace: repoNS},
		Data: map[string][]byte{"username": []byte("ada"), "password": []byte("s3cret")}}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	req := request(repoNS)

	st, err := b.Resolve(ctx, nil, req, "git-creds")
	if err != nil {
		t.Fatal(err)
	}
	if st.Phase != knitv1alpha1.BuildRunning || st.Key != b.Key(req) || st.Commit != req.Commit || st.StartTime == nil {
		t.Fatalf("first Resolve = %+v, want a running build of the key", st)
	}
	job := getJob(t, b, st)
	if l := job.Labels; l[RepositoryLabel] != "shop" || l[RepositoryNamespaceLabel] != repoNS {
		t.Errorf("Job labels %v do not name the repository", l)
	}
	var all []string
	for _, c := range append(job.Spec.Template.Spec.InitContainers, job.Spec.Template.Spec.Containers...) {
		all = append(all, c.Args...)
	}
	args := strings.Join(all, " ")
	for _, want := range []string{"--image=10.250.0.2:5000/" + repoNS + "/shop/hello", "--commit=" + req.Commit, "--package=./cmd/hello", "--insecure=true"} {
		if !strings.Contains(args, want) {
			t.Errorf("builder args %q lack %q", args, want)
		}
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: b.Namespace(), Name: "knit-build-cache"}, &corev1.PersistentVolumeClaim{}); err != nil {
		t.Errorf("the cache claim was not created: %v", err)
	}
	copied := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: b.Namespace(), Name: job.Name + "-source"}, copied); err != nil {
		t.Fatalf("the credentials were not copied beside the Job: %v", err)
	}
	if string(copied.Data["password"]) != "s3cret" || len(copied.OwnerReferences) != 1 || copied.OwnerReferences[0].UID != job.UID {
		t.Errorf("copied credentials = %v owned by %v, want the repository's, owned by the Job", copied.Data, copied.OwnerReferences)
	}

	builds := Record(nil, st)
	again, err := b.Resolve(ctx, builds, req, "git-creds")
	if err != nil || again.Phase != knitv1alpha1.BuildRunning || again.StartTime.Time != st.StartTime.Time {
		t.Fatalf("Resolve while running = %+v, %v; want the same running build", again, err)
	}

	image := "10.250.0.2:5000/" + repoNS + "/shop/hello@sha256:" + strings.Repeat("a", 64)
	finish(t, job, false, `{"image":"`+image+`","fetch":"0.1s","compile":"2s","push":"0.3s"}`)
	done, err := b.Resolve(ctx, builds, req, "git-creds")
	if err != nil {
		t.Fatal(err)
	}
	if done.Phase != knitv1alpha1.BuildSucceeded || done.Image != image || done.Durations != "fetch=0.1s compile=2s push=0.3s" || done.CompletionTime == nil {
		t.Fatalf("Resolve after the Job completed = %+v, want Succeeded with %s", done, image)
	}
	err = k8s.Get(ctx, client.ObjectKeyFromObject(copied), &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the credentials' copy outlives the build: %v", err)
	}

	// Known: the record answers, whatever happened to the Job.
	if err := k8s.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{}); apierrors.IsNotFound(err) || time.Now().After(deadline) {
			break
		}
	}
	builds = Record(builds, done)
	known, err := b.Resolve(ctx, builds, req, "git-creds")
	if err != nil || known.Image != image {
		t.Fatalf("Resolve of a recorded key = %+v, %v; want %s without a Job", known, err, image)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{}); err == nil {
		t.Error("Resolve of a recorded key started a Job again")
	}
}

func TestBuilderFailures(t *testing.T) {
	tests := []struct {
		name, message, want string
	}{
		{"the compiler's error", `{"error":"cmd/hello/main.go:5:2: undefined: x","fetch":"0.1s","compile":"1s"}`, "cmd/hello/main.go:5:2: undefined: x"},
		{"no result: the Job's condition", "", "failed: DeadlineExceeded: Job was active longer than specified deadline"},
		{"a result that is not JSON", "signal: killed", "read the builder's result"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, repoNS := newBuilder(t)
			ctx := context.Background()
			req := request(repoNS)
			st, err := b.Resolve(ctx, nil, req, "")
			if err != nil {
				t.Fatal(err)
			}
			finish(t, getJob(t, b, st), true, tt.message)
			deadline := time.Now().Add(10 * time.Second)
			for {
				st, err = b.Resolve(ctx, Record(nil, st), req, "")
				if err != nil {
					t.Fatal(err)
				}
				if st.Phase != knitv1alpha1.BuildRunning || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if st.Phase != knitv1alpha1.BuildFailed || !strings.Contains(st.Message, tt.want) {
				t.Errorf("Resolve of a failed build = %+v, want Failed with %q", st, tt.want)
			}
		})
	}
}

// A repository with GitHub App credentials gives its build Job an
// installation token, never the app's private key.
func TestBuilderCopiesATokenForGitHubApps(t *testing.T) {
	b, repoNS := newBuilder(t)
	github := githubapptest.New(t)
	b.SetCredentialResolver(githubapp.New(github.Client()).Resolve)
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app-creds", Namespace: repoNS}, Data: github.Secret()}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	st, err := b.Resolve(ctx, nil, request(repoNS), "app-creds")
	if err != nil {
		t.Fatal(err)
	}
	job := getJob(t, b, st)
	copied := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: b.Namespace(), Name: job.Name + "-source"}, copied); err != nil {
		t.Fatalf("no credentials beside the Job: %v", err)
	}
	if string(copied.Data["username"]) != githubapp.TokenUser || string(copied.Data["password"]) != "ghs_token1" {
		t.Errorf("copied credentials %q, want x-access-token and the installation token", copied.Data)
	}
	for k, v := range copied.Data {
		if strings.HasPrefix(k, "githubApp") || strings.Contains(string(v), "PRIVATE KEY") {
			t.Errorf("the copy beside the Job holds %s", k)
		}
	}
}

// A repository fetched over SSH gives its build Job the deploy key and
// known_hosts, in a copy holding nothing else, read by the fetch step
// alone; one without them fails at once, saying what is missing.
func TestBuilderGivesSSHRepositoriesTheirDeployKey(t *testing.T) {
	b, repoNS := newBuilder(t)
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "deploy-key", Namespace: repoNS}, Data: map[string][]byte{
		"identity": []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"), "known_hosts": []byte("github.com ssh-ed25519 AAAA\n"),
		"webhookSecret": []byte("hmac"), "apiToken": []byte("forge-token"),
	}}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	req := request(repoNS)
	req.URL = "git@github.com:org/shop.git"
	st, err := b.Resolve(ctx, nil, req, "deploy-key")
	if err != nil {
		t.Fatal(err)
	}
	job := getJob(t, b, st)
	copied := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: b.Namespace(), Name: job.Name + "-source"}, copied); err != nil {
		t.Fatalf("no credentials beside the Job: %v", err)
	}
	if len(copied.Data) != 2 || len(copied.Data["identity"]) == 0 || len(copied.Data["known_hosts"]) == 0 {
		t.Errorf("copied keys %v, want identity and known_hosts only", slices.Sorted(maps.Keys(copied.Data)))
	}
	for _, c := range append(job.Spec.Template.Spec.InitContainers, job.Spec.Template.Spec.Containers...) {
		var env []string
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == copied.Name {
				env = append(env, e.Name+"="+e.ValueFrom.SecretKeyRef.Key)
			}
		}
		want := ""
		if c.Name == fetchStep {
			want = "GIT_SSH_IDENTITY=identity GIT_SSH_KNOWN_HOSTS=known_hosts GIT_SSH_PASSWORD=password"
		}
		if got := strings.Join(env, " "); got != want {
			t.Errorf("container %s reads %q from the copy, want %q", c.Name, got, want)
		}
	}

	other := request(repoNS)
	other.URL, other.Image = "ssh://git@github.com/org/shop.git", "ko://./cmd/other"
	if _, err := b.Resolve(ctx, nil, other, ""); !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "deploy key") {
		t.Errorf("Resolve of an ssh repository without a Secret = %v, want ErrFailed naming the deploy key", err)
	}
}
