package revision

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// podRevisionIndex indexes the pod cache by the Revision a pod serves
// (its serving.knative.dev/revision label), so a Revision's pods are one
// index lookup, however many pods its namespace holds.
const podRevisionIndex = "pod.revision"

// newPodCache is a cache of Revisions' pods alone, for status.
// containerStatuses and for the failures their kubelet reports: only pods
// with the revision label (never the rest of the cluster's), each cut by
// slimPod. A cache of its own, so the manager's cache and the composition
// roots stay as they are; the manager starts it.
func newPodCache(mgr ctrl.Manager) (cache.Cache, error) {
	hasRevision, err := labels.NewRequirement(servingv1.RevisionLabelKey, selection.Exists, nil)
	if err != nil {
		return nil, fmt.Errorf("pod cache selector: %w", err)
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {
			Label: labels.NewSelector().Add(*hasRevision), Transform: slimPod,
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("pod cache: %w", err)
	}
	if err := c.IndexField(context.Background(), &corev1.Pod{}, podRevisionIndex, podRevision); err != nil {
		return nil, fmt.Errorf("index pods by Revision: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("add pod cache: %w", err)
	}
	return c, nil
}

// podRevision is podRevisionIndex's key: the Revision the pod serves.
func podRevision(o client.Object) []string {
	return []string{o.GetLabels()[servingv1.RevisionLabelKey]}
}

// slimPod keeps what status.containerStatuses and failureOf need of a
// pod — its name, revision label and deletion, whether it is scheduled,
// and its containers' image IDs and the reasons, messages and exit codes
// of their waiting and terminated states — so the cache holds a few
// hundred bytes a pod, not its whole spec and status.
func slimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	slim := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion, DeletionTimestamp: p.DeletionTimestamp,
		Labels: map[string]string{servingv1.RevisionLabelKey: p.Labels[servingv1.RevisionLabelKey]},
	}}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			slim.Status.Conditions = append(slim.Status.Conditions, corev1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
		}
	}
	slim.Status.InitContainerStatuses = slimContainers(p.Status.InitContainerStatuses)
	slim.Status.ContainerStatuses = slimContainers(p.Status.ContainerStatuses)
	return slim, nil
}

func slimContainers(statuses []corev1.ContainerStatus) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, cs := range statuses {
		slim := corev1.ContainerStatus{Name: cs.Name, ImageID: cs.ImageID,
			State:                corev1.ContainerState{Terminated: slimTerminated(cs.State.Terminated)},
			LastTerminationState: corev1.ContainerState{Terminated: slimTerminated(cs.LastTerminationState.Terminated)}}
		if w := cs.State.Waiting; w != nil {
			slim.State.Waiting = &corev1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
		}
		out = append(out, slim)
	}
	return out
}

func slimTerminated(t *corev1.ContainerStateTerminated) *corev1.ContainerStateTerminated {
	if t == nil {
		return nil
	}
	return &corev1.ContainerStateTerminated{ExitCode: t.ExitCode, Reason: t.Reason, Message: t.Message}
}

// watchPods wakes a pod's Revision when podReportChanged.
func watchPods(c cache.Cache) source.Source {
	return source.Kind(c, &corev1.Pod{},
		handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, p *corev1.Pod) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Labels[servingv1.RevisionLabelKey]}}}
		}),
		podReportChanged)
}

// podReportChanged passes a pod that reports what the Revision's status
// reads of it anew: image IDs it did not report before (one created with
// them, or a container's start), or another failure (failureOf: a
// container that cannot pull its image or exits, or one that recovered).
// Every other pod change (readiness, which the Deployment's status
// carries, a restart that fails the same way, deletion) wakes nothing.
var podReportChanged = predicate.TypedFuncs[*corev1.Pod]{
	CreateFunc: func(e event.TypedCreateEvent[*corev1.Pod]) bool {
		return len(imageIDs(e.Object)) > 0 || failureOf(e.Object) != nil
	},
	UpdateFunc: func(e event.TypedUpdateEvent[*corev1.Pod]) bool {
		return !slices.Equal(imageIDs(e.ObjectOld), imageIDs(e.ObjectNew)) || !ptr.Equal(failureOf(e.ObjectOld), failureOf(e.ObjectNew))
	},
	DeleteFunc:  func(event.TypedDeleteEvent[*corev1.Pod]) bool { return false },
	GenericFunc: func(event.TypedGenericEvent[*corev1.Pod]) bool { return false },
}

// imageIDs are the pod's containers' reported image IDs, in order.
func imageIDs(p *corev1.Pod) []string {
	var out []string
	for _, cs := range p.Status.ContainerStatuses {
		if cs.ImageID != "" {
			out = append(out, cs.Name+"="+cs.ImageID)
		}
	}
	return out
}

// listPods reads the Revision's pods from the pod cache; a nil cache
// reads none. Under knit dev they are the local runtime's mirrors of its
// replicas, which report failures on the Deployment too (MarkStatus
// prefers those).
func (r *Reconciler) listPods(ctx context.Context, rev *servingv1.Revision) ([]corev1.Pod, error) {
	if r.pods == nil {
		return nil, nil
	}
	pods := &corev1.PodList{}
	if err := r.pods.List(ctx, pods, client.InNamespace(rev.Namespace), client.MatchingFields{podRevisionIndex: rev.Name}); err != nil {
		return nil, fmt.Errorf("list pods of Revision %s/%s: %w", rev.Namespace, rev.Name, err)
	}
	return pods.Items, nil
}

// markContainerStatuses records the digests the Revision's containers
// run (ContainerStatuses) once its pods report them all; set once, as
// Knative sets them, and kept when the pods are gone. A container whose
// tag was not resolved (a registry that skips resolving) gets the digest
// its pods report, which says what ran, once.
func markContainerStatuses(rev *servingv1.Revision, pods []corev1.Pod) {
	markStatuses(&rev.Status.ContainerStatuses, len(rev.Spec.Containers), ContainerStatuses(rev, pods))
	markStatuses(&rev.Status.InitContainerStatuses, len(rev.Spec.InitContainers), InitContainerStatuses(rev, pods))
}

// markStatuses sets *have to ran when it holds no digest for each of the
// spec's n containers yet, and otherwise fills only its empty digests.
func markStatuses(have *[]servingv1.ContainerStatus, n int, ran []servingv1.ContainerStatus) {
	if n == 0 {
		return
	}
	if len(*have) != n {
		if ran != nil {
			*have = ran
		}
		return
	}
	for i := range *have {
		cs := &(*have)[i]
		if cs.ImageDigest == "" && i < len(ran) && ran[i].Name == cs.Name {
			cs.ImageDigest = ran[i].ImageDigest
		}
	}
}
