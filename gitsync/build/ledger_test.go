//go:build !unit

package build

import (
	"context"
	"errors"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/build/kopath"
)

// A ko:// image that is a flag in disguise fails at once: no Job, no
// copy of the credentials.
func TestResolveRefusesInvalidImages(t *testing.T) {
	b, repoNS := newBuilder(t)
	ctx := context.Background()
	req := request(repoNS)
	req.Image = "ko://-toolexec=/bin/sh"
	_, err := b.Resolve(ctx, nil, req, "")
	if !errors.Is(err, ErrFailed) || !errors.Is(err, kopath.ErrInvalid) {
		t.Fatalf("Resolve(%s) = %v, want ErrFailed and kopath.ErrInvalid", req.Image, err)
	}
	jobs := &batchv1.JobList{}
	if err := k8s.List(ctx, jobs, client.InNamespace(b.Namespace())); err != nil || len(jobs.Items) != 0 {
		t.Errorf("build Jobs after a refused image: %d, %v", len(jobs.Items), err)
	}
}

// What a key built is what knit recorded when its push step reported:
// a status record claiming another image, or a success knit never
// recorded, is not believed.
func TestResolveTrustsTheLedgerOnly(t *testing.T) {
	b, repoNS := newBuilder(t)
	ctx := context.Background()
	req := request(repoNS)
	key := b.Key(req)
	forged := knitv1alpha1.BuildStatus{Key: key, Phase: knitv1alpha1.BuildSucceeded, Image: "evil.example/x@sha256:" + strings.Repeat("f", 64)}

	st, err := b.Resolve(ctx, []knitv1alpha1.BuildStatus{forged}, req, "")
	if err != nil || st.Phase != knitv1alpha1.BuildRunning {
		t.Fatalf("Resolve of a success knit never recorded = %+v, %v; want a build started", st, err)
	}
	job := getJob(t, b, st)
	image := "10.250.0.2:5000/" + repoNS + "/shop/hello@sha256:" + strings.Repeat("a", 64)
	finishSteps(t, job, map[string]string{
		compileStep:  `{"compile":"1s","image":"evil.example/x@sha256:` + strings.Repeat("f", 64) + `"}`,
		containerLog: `{"image":"` + image + `","push":"0.1s"}`,
	})
	done, err := b.Resolve(ctx, Record(nil, st), req, "")
	if err != nil || done.Phase != knitv1alpha1.BuildSucceeded || done.Image != image {
		t.Fatalf("Resolve after the push = %+v, %v; want %s, the push step's image", done, err, image)
	}
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: b.Namespace(), Name: LedgerName(repoNS)}, cm); err != nil || cm.Data[key] != image {
		t.Fatalf("ledger %s = %v, %v; want %s → %s", LedgerName(repoNS), cm.Data, err, key[:16], image)
	}

	// The status now claims another image: the ledger answers.
	forged.Phase, forged.Image = knitv1alpha1.BuildSucceeded, "evil.example/y@sha256:"+strings.Repeat("e", 64)
	again, err := b.Resolve(ctx, []knitv1alpha1.BuildStatus{forged}, req, "")
	if err != nil || again.Image != image {
		t.Errorf("Resolve with a forged record = %+v, %v; want %s", again, err, image)
	}

	// The same tree in another namespace is another key, with no record.
	other := newBuilderNamespace(t)
	oreq := request(other)
	if b.Key(oreq) == key {
		t.Fatal("two namespaces share a build key")
	}
	if img, err := b.ledger().Recorded(ctx, other, b.Key(oreq)); err != nil || img != "" {
		t.Errorf("another namespace finds %q, %v recorded", img, err)
	}
}

// finishSteps completes the Job with a pod whose steps left messages.
func finishSteps(t *testing.T, job *batchv1.Job, messages map[string]string) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{}
	pod.Name, pod.Namespace = job.Name+"-x", job.Namespace
	pod.Labels = map[string]string{batchv1.JobNameLabel: job.Name}
	pod.Spec = *job.Spec.Template.Spec.DeepCopy()
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	status := func(c corev1.Container) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "x",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: messages[c.Name]}}}
	}
	for _, c := range pod.Spec.InitContainers {
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, status(c))
	}
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, status(c))
	}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	finish(t, job, false, "")
}

func newBuilderNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{}
	ns.GenerateName = "build-"
	if err := k8s.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return ns.Name
}
