package revision

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/reconciletest"
)

const (
	sha  = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	sha2 = "sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
)

func TestImageDigest(t *testing.T) {
	for _, tc := range []struct{ name, imageID, want string }{
		{name: "containerd", imageID: "docker.io/library/helloworld@" + sha, want: "docker.io/library/helloworld@" + sha},
		{name: "a registry with a port", imageID: "registry.local:5000/knit/app@" + sha, want: "registry.local:5000/knit/app@" + sha},
		{name: "dockershim", imageID: "docker-pullable://gcr.io/knative-samples/helloworld-go@" + sha, want: "gcr.io/knative-samples/helloworld-go@" + sha},
		{name: "an image ID, no repository", imageID: sha},
		{name: "docker's image ID", imageID: "docker://" + sha},
		{name: "not started yet", imageID: ""},
		{name: "a short digest", imageID: "docker.io/library/helloworld@sha256:0123"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, imageDigest(tc.imageID)); diff != "" {
				t.Errorf("imageDigest(%q) (-want +got):\n%s", tc.imageID, diff)
			}
		})
	}
}

// pod is a pod of the Revision whose containers report imageIDs, name=ID.
func pod(name string, ids ...[2]string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{servingv1.RevisionLabelKey: "hello-00001"}}}
	for _, id := range ids {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: id[0], ImageID: id[1]})
	}
	return p
}

func TestContainerStatuses(t *testing.T) {
	rev := testRevision()
	rev.Spec.Containers = []corev1.Container{{Name: "user-container", Image: "example.com/hello"}, {Name: "sidecar", Image: "example.com/side"}}
	app, side := "example.com/hello@"+sha, "example.com/side@"+sha2
	tests := []struct {
		name string
		pods []corev1.Pod
		want []servingv1.ContainerStatus
	}{{
		name: "no pods: knit dev, or scaled to zero",
	}, {
		name: "every container in spec order, queue-proxy left out",
		pods: []corev1.Pod{*pod("a", [2]string{"sidecar", side}, [2]string{"queue-proxy", "example.com/queue@" + sha}, [2]string{"user-container", "docker-pullable://" + app})},
		want: []servingv1.ContainerStatus{{Name: "user-container", ImageDigest: app}, {Name: "sidecar", ImageDigest: side}},
	}, {
		name: "put together from two pods, one still starting",
		pods: []corev1.Pod{*pod("a", [2]string{"user-container", app}), *pod("b", [2]string{"sidecar", side}, [2]string{"user-container", ""})},
		want: []servingv1.ContainerStatus{{Name: "user-container", ImageDigest: app}, {Name: "sidecar", ImageDigest: side}},
	}, {
		name: "a container without a digest (an image ID alone): none at all",
		pods: []corev1.Pod{*pod("a", [2]string{"user-container", app}, [2]string{"sidecar", sha2})},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ContainerStatuses(rev, tc.pods)); diff != "" {
				t.Errorf("ContainerStatuses (-want +got):\n%s", diff)
			}
		})
	}
}

// The reconciler records the digests its pods report, once: later pods
// (another pull of a moved tag) and no pods at all leave them as they
// are, and listing pods that fails is retried.
func TestReconcileContainerStatuses(t *testing.T) {
	digest := "example.com/hello@" + sha
	known := testRevision()
	known.Status.ContainerStatuses = []servingv1.ContainerStatus{{Name: "", ImageDigest: "example.com/hello@" + sha2}}
	tests := []struct {
		name    string
		objs    []client.Object
		funcs   interceptor.Funcs
		wantErr string
		want    []servingv1.ContainerStatus
	}{{
		name: "no pod: none",
		objs: []client.Object{testRevision()},
	}, {
		name: "a pod that pulled the image",
		objs: []client.Object{testRevision(), pod("a", [2]string{"", "docker.io/" + digest}), pod("other", [2]string{"", "x@" + sha2})},
		want: []servingv1.ContainerStatus{{Name: "", ImageDigest: "docker.io/" + digest}},
	}, {
		name: "known already: kept",
		objs: []client.Object{known, pod("a", [2]string{"", digest})},
		want: known.Status.ContainerStatuses,
	}, {
		name: "listing pods fails: retried",
		objs: []client.Object{testRevision()},
		funcs: interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*corev1.PodList); ok {
				return context.DeadlineExceeded
			}
			return c.List(ctx, list, opts...)
		}},
		wantErr: "list pods of Revision default/hello-00001: context deadline exceeded",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The other pod belongs to another Revision.
			for _, o := range tc.objs {
				if o.GetName() == "other" {
					o.SetLabels(map[string]string{servingv1.RevisionLabelKey: "hello-00002"})
				}
			}
			g := newRig(t, tc.funcs, tc.objs...)
			_, err := g.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
			if !reconciletest.ErrMatches(err, tc.wantErr) {
				t.Fatalf("Reconcile error = %v, want %q", err, tc.wantErr)
			}
			rev := &servingv1.Revision{}
			if err := g.c.Get(context.Background(), key, rev); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, rev.Status.ContainerStatuses); diff != "" {
				t.Errorf("containerStatuses (-want +got):\n%s", diff)
			}
		})
	}
}

// A change in what the pod's containers report as image IDs wakes the
// Revision (as does a change of failure, TestWatchPodsWakesOnFailure):
// readiness, restarts and deletion do not.
func TestWatchPodsWakes(t *testing.T) {
	starting := pod("a", [2]string{"user-container", ""})
	started := pod("a", [2]string{"user-container", "example.com/hello@" + sha})
	ready := started.DeepCopy()
	ready.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	for _, tc := range []struct {
		name     string
		old, new *corev1.Pod
		want     bool
	}{
		{name: "a container started", old: starting, new: started, want: true},
		{name: "readiness alone", old: started, new: ready},
		{name: "nothing started yet", old: starting, new: starting.DeepCopy()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := podReportChanged.Update(event.TypedUpdateEvent[*corev1.Pod]{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
				t.Errorf("wakes = %v, want %v", got, tc.want)
			}
		})
	}
	slim, err := slimPod(ready)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a", Labels: map[string]string{servingv1.RevisionLabelKey: "hello-00001"}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "user-container", ImageID: "example.com/hello@" + sha}}}}
	if !podReportChanged.Create(event.TypedCreateEvent[*corev1.Pod]{Object: started}) || podReportChanged.Create(event.TypedCreateEvent[*corev1.Pod]{Object: starting}) ||
		podReportChanged.Delete(event.TypedDeleteEvent[*corev1.Pod]{Object: started}) {
		t.Error("want a created pod to wake its Revision only with image IDs, a deleted one never")
	}
	if diff := cmp.Diff(want, slim); diff != "" {
		t.Errorf("slimPod (-want +got):\n%s", diff)
	}
}

// Init containers' digests come from the pods' initContainerStatuses and
// are recorded beside the containers', in their own list.
func TestInitContainerStatuses(t *testing.T) {
	rev := testRevision()
	rev.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "example.com/setup"}}
	setup, app := "example.com/setup@"+sha2, "example.com/hello@"+sha
	p := pod("a", [2]string{"", app})
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "setup", ImageID: setup}}
	markContainerStatuses(rev, []corev1.Pod{*p})
	if diff := cmp.Diff([]servingv1.ContainerStatus{{Name: "setup", ImageDigest: setup}}, rev.Status.InitContainerStatuses); diff != "" {
		t.Errorf("initContainerStatuses (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]servingv1.ContainerStatus{{Name: "", ImageDigest: app}}, rev.Status.ContainerStatuses); diff != "" {
		t.Errorf("containerStatuses (-want +got):\n%s", diff)
	}
	if !digestsKnown(rev) {
		t.Error("digestsKnown = false with every digest recorded")
	}
	// A pod that has not run its init container yet says nothing of it.
	fresh := testRevision()
	fresh.Spec.InitContainers = rev.Spec.InitContainers
	markContainerStatuses(fresh, []corev1.Pod{*pod("b", [2]string{"", app})})
	if fresh.Status.InitContainerStatuses != nil || digestsKnown(fresh) {
		t.Errorf("init digests recorded without a report: %v", fresh.Status.InitContainerStatuses)
	}
}
