package dev

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/gitsync/build"
	"github.com/knitops/knit/local/podlogs"
)

// Mirror pods: the kubelet's way of showing the API a pod it runs that
// the API did not create (a static pod). A dockerfile:// build in knit
// dev runs in BuildKit, not in a pod, yet `kubectl logs` reads pods only;
// so each build is mirrored as a Pod on knit dev's node, and its log is
// the build's log file, through the log endpoint.
const (
	mirrorAnnotation = "kubernetes.io/config.mirror"
	sourceAnnotation = "kubernetes.io/config.source"
	buildContainer   = "build"
	// buildPodPrefix begins every build.JobName, the names of build pods.
	buildPodPrefix = "knit-build-"
	// keptBuildPods bounds the finished build pods kept, newest first,
	// beside build.DefaultTTL, as a cluster's build Jobs' TTL does.
	keptBuildPods = 20
)

// buildPods publishes knit dev's builds as mirror pods in knit-system,
// named as a cluster's build Jobs are (build.JobName).
type buildPods struct {
	client  client.Client
	node    string
	logFile func(key string) string
	now     func() time.Time
	log     logr.Logger

	mu   sync.Mutex
	live map[string]chan struct{} // by pod name, closed when its build ends
}

func newBuildPods(c client.Client, node string, logFile func(string) string, log logr.Logger) *buildPods {
	return &buildPods{client: c, node: node, logFile: logFile, now: time.Now, log: log, live: map[string]chan struct{}{}}
}

// buildPod is the mirror pod of the build of key for r.
func (p *buildPods) buildPod(key string, r build.Request) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: config.SystemNamespace, Name: build.JobName(key),
			Labels: map[string]string{build.BuildLabel: key[:16], build.RepositoryLabel: r.Repository, build.RepositoryNamespaceLabel: r.Namespace},
			Annotations: map[string]string{
				mirrorAnnotation: key[:16], sourceAnnotation: "knit-dev", build.KeyAnnotation: key,
				"knit.dev/build-image": r.Image, "knit.dev/build-commit": r.Commit,
			},
		},
		Spec: corev1.PodSpec{
			NodeName:      p.node,
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: buildContainer, Image: buildkitToolchain}},
		},
	}
}

// started publishes the build's pod, Running, replacing one of an earlier
// build of the same key (a failed build run again), and collects old ones.
func (p *buildPods) started(ctx context.Context, key string, r build.Request) {
	pod := p.buildPod(key, r)
	p.mu.Lock()
	p.live[pod.Name] = make(chan struct{})
	p.mu.Unlock()
	p.collect(ctx)
	if err := p.delete(ctx, pod.Name); err != nil {
		p.log.Error(err, "Build pod not replaced", "pod", pod.Name)
		return
	}
	if err := p.client.Create(ctx, pod); err != nil {
		p.log.Error(err, "Build pod not created", "pod", pod.Name)
		return
	}
	now := metav1.NewTime(p.now())
	p.writeStatus(ctx, pod, corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}, now)
}

// finished writes how the build ended on its pod; err is the build's.
func (p *buildPods) finished(ctx context.Context, key string, r build.Request, began time.Time, err error) {
	pod := p.buildPod(key, r)
	p.mu.Lock()
	if ch := p.live[pod.Name]; ch != nil {
		close(ch)
		delete(p.live, pod.Name)
	}
	p.mu.Unlock()
	if err := p.client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		p.log.Error(err, "Build pod not found to finish", "pod", pod.Name)
		return
	}
	phase, term := corev1.PodSucceeded, &corev1.ContainerStateTerminated{Reason: "Completed"}
	if err != nil {
		phase, term.ExitCode, term.Reason, term.Message = corev1.PodFailed, 1, "Error", truncate(err.Error(), 1000)
	}
	term.StartedAt, term.FinishedAt = metav1.NewTime(began), metav1.NewTime(p.now())
	p.writeStatus(ctx, pod, phase, corev1.ContainerState{Terminated: term}, metav1.NewTime(began))
}

func (p *buildPods) writeStatus(ctx context.Context, pod *corev1.Pod, phase corev1.PodPhase, state corev1.ContainerState, started metav1.Time) {
	pod.Status = corev1.PodStatus{
		Phase: phase, HostIP: "127.0.0.1", StartTime: &started,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: started}},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: buildContainer, Image: buildkitToolchain, State: state,
			Ready: state.Running != nil, Started: ptrTo(state.Running != nil),
		}},
	}
	if err := p.client.Status().Update(ctx, pod); err != nil {
		p.log.Error(err, "Build pod status not written", "pod", pod.Name, "phase", phase)
	}
}

func ptrTo[T any](v T) *T { return &v }

// delete removes a build pod at once: no kubelet confirms a mirror pod's end.
func (p *buildPods) delete(ctx context.Context, name string) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: name}}
	err := p.client.Delete(ctx, pod, client.GracePeriodSeconds(0))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete build pod %s: %w", name, err)
	}
	return nil
}

// collect deletes the build pods that are done with: finished more than
// build.DefaultTTL ago or beyond the newest keptBuildPods, and Running
// ones no build of this knit dev runs (an earlier knit dev's, cut short).
func (p *buildPods) collect(ctx context.Context) {
	var list corev1.PodList
	if err := p.client.List(ctx, &list, client.InNamespace(config.SystemNamespace), client.HasLabels{build.BuildLabel}); err != nil {
		p.log.Error(err, "Build pods not listed for collection")
		return
	}
	for _, name := range p.expired(list.Items) {
		if err := p.delete(ctx, name); err != nil {
			p.log.Error(err, "Build pod not collected", "pod", name)
		}
	}
}

// expired names the pods collect deletes.
func (p *buildPods) expired(pods []corev1.Pod) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var done []corev1.Pod
	var names []string
	for _, pod := range pods {
		switch {
		case pod.Annotations[mirrorAnnotation] == "":
		case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
			done = append(done, pod)
		case p.live[pod.Name] == nil:
			names = append(names, pod.Name)
		}
	}
	slices.SortFunc(done, func(a, b corev1.Pod) int { return finishedAt(b).Compare(finishedAt(a)) })
	for i, pod := range done {
		if i >= keptBuildPods || p.now().Sub(finishedAt(pod)) > build.DefaultTTL {
			names = append(names, pod.Name)
		}
	}
	return names
}

// finishedAt is when a build pod's build ended, else when it was made.
func finishedAt(pod corev1.Pod) time.Time {
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			return t.FinishedAt.Time
		}
	}
	return pod.CreationTimestamp.Time
}

// ContainerLog is the log of a build pod's one container: the build's log
// file, growing while the build runs. A build has no previous run.
func (p *buildPods) ContainerLog(namespace, pod, container string, previous bool) (podlogs.Log, error) {
	key16, ok := strings.CutPrefix(pod, buildPodPrefix)
	if namespace != config.SystemNamespace || !ok || len(key16) != 16 {
		return podlogs.Log{}, podlogs.PodNotFound(pod)
	}
	if container != buildContainer {
		return podlogs.Log{}, podlogs.ContainerNotFound(container, pod)
	}
	if previous {
		return podlogs.Log{}, podlogs.PreviousNotFound(container, pod)
	}
	p.mu.Lock()
	live := p.live[pod]
	p.mu.Unlock()
	l := podlogs.Log{Path: p.logFile(key16), To: -1, Live: live}
	if _, err := os.Stat(l.Path); err != nil && live == nil {
		return podlogs.Log{}, podlogs.PodNotFound(pod)
	}
	return l, nil
}
