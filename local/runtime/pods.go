package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// podWorkers bounds the Pod writes in flight. A replica's changes that
// come while its Pod waits in the queue or is being written are one
// write when its turn comes, so a burst of starts costs about a create
// and a status write a replica, not a write per container event.
const podWorkers = 4

// podPublisher mirrors each replica as a Pod object (doc.go, Pods):
// created when the replica is made, its status written through
// pods/status when what it shows changes, deleted when the replica's
// processes are gone. It keeps what it wrote, so an unchanged status is
// never written and the API is never read to find out.
type podPublisher struct {
	// earlierGone is closed once the Pods an earlier knit dev left are
	// deleted (forgetEarlierPods); no Pod is created before.
	earlierGone chan struct{}

	mu    sync.Mutex
	queue workQueue // the controller's, once it starts
	pods  map[types.NamespacedName]*podRecord
}

// podRecord is one replica's Pod as the publisher knows it.
type podRecord struct {
	replica *replica    // nil once its processes are gone: the Pod goes
	pod     *corev1.Pod // what to create; nil once created
	uid     types.UID   // of the Pod created; "" until then
	status  *corev1.PodStatus
	// deleted: the Pod was deleted by someone else (kubectl delete pod, the
	// garbage collector, a namespace's deletion); its replica is stopping
	// and its Pod stays gone.
	deleted bool
}

// podKey names a replica's Pod.
func podKey(r *replica) types.NamespacedName {
	return types.NamespacedName{Namespace: r.pod.Namespace, Name: r.pod.Name}
}

// track records a new replica, whose Pod is pod (makePod), and asks for
// it to be created.
func (p *podPublisher) track(r *replica, pod *corev1.Pod) {
	p.mu.Lock()
	if p.pods == nil {
		p.pods = map[types.NamespacedName]*podRecord{}
	}
	p.pods[podKey(r)] = &podRecord{replica: r, pod: pod}
	p.mu.Unlock()
	p.changed(r)
}

// changed asks for the replica's Pod to be brought up to date.
func (p *podPublisher) changed(r *replica) {
	p.mu.Lock()
	q := p.queue
	p.mu.Unlock()
	if q != nil {
		q.Add(reconcile.Request{NamespacedName: podKey(r)})
	}
}

// gone records that a replica's processes are all gone: its Pod is
// deleted.
func (p *podPublisher) gone(r *replica) {
	p.mu.Lock()
	if rec := p.pods[podKey(r)]; rec != nil {
		rec.replica = nil
	}
	p.mu.Unlock()
	p.changed(r)
}

// source captures the controller's queue and asks for every Pod the
// replicas made before it started need.
func (p *podPublisher) source() source.Source {
	return source.Func(func(_ context.Context, q workQueue) error {
		p.mu.Lock()
		p.queue = q
		keys := slices.Collect(maps.Keys(p.pods))
		p.mu.Unlock()
		for _, k := range keys {
			q.Add(reconcile.Request{NamespacedName: k})
		}
		return nil
	})
}

// deletedByOthers stops the replica whose Pod was deleted, as the kubelet
// stops a deleted pod's containers; its Deployment then gets a new one,
// as a ReplicaSet replaces a deleted pod. A Pod the runtime deleted
// itself, or an older one of the same name, is no longer recorded under
// its UID and changes nothing.
func (p *podPublisher) deletedByOthers(key types.NamespacedName, uid types.UID) {
	p.markDeleted(key, uid, true)
}

// terminatingByOthers is deletedByOthers for a Pod whose graceful deletion
// began (deletionTimestamp set): it is still there, and goes for good once
// its replica has stopped, when the runtime deletes it with no grace
// period left, as the kubelet does.
func (p *podPublisher) terminatingByOthers(key types.NamespacedName, uid types.UID) {
	p.markDeleted(key, uid, false)
}

func (p *podPublisher) markDeleted(key types.NamespacedName, uid types.UID, gone bool) {
	p.mu.Lock()
	rec := p.pods[key]
	if rec == nil || rec.uid == "" || rec.uid != uid || rec.replica == nil || (rec.deleted && !gone) {
		p.mu.Unlock()
		return
	}
	rec.deleted, rec.status = true, nil
	if gone {
		rec.uid = ""
	}
	r := rec.replica
	p.mu.Unlock()
	r.mu.Lock()
	stopping := r.terminating // its Deployment's deletion, say, which the garbage collector follows
	r.mu.Unlock()
	if !stopping {
		r.log.Info("Pod deleted; stopping its replica")
		r.stop()
	}
}

// makePod is the Pod a replica of d stands for, as d's ReplicaSet would
// create it: the template's labels (with pod-template-hash, the runtime's
// template hash) and annotations, its spec, named <deployment>-<hash>-<id>
// (the replica's HOSTNAME). The Deployment owns it, there being no
// ReplicaSet, so the garbage collector and a namespace's deletion remove
// it. spec.nodeName is knit dev's node, where the replica runs: the API
// server sends `kubectl logs` to the kubelet of the Pod's node (package
// podlogs serves as one). A bound Pod's deletion is graceful, as on a
// cluster: it waits, Terminating, until the runtime has stopped its
// replica and deletes it for good (podReconciler).
func makePod(d *appsv1.Deployment, name, hash, nodeName string) *corev1.Pod {
	t := d.Spec.Template.DeepCopy()
	labels := maps.Clone(t.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: d.Namespace, Name: name, Labels: labels, Annotations: t.Annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment", Name: d.Name, UID: d.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: t.Spec,
	}
	pod.Spec.NodeName = nodeName
	if pod.Spec.ServiceAccountName == "" {
		// What the ServiceAccount admission plugin, off in knit dev, sets:
		// a projected token is valid only for a named account.
		pod.Spec.ServiceAccountName = "default"
	}
	return pod
}

// ownedByDeployment reports a Pod the runtime published: Kubernetes'
// controllers own Pods through ReplicaSets, never straight from a
// Deployment.
func ownedByDeployment(o metav1.Object) bool {
	ref := metav1.GetControllerOf(o)
	return ref != nil && ref.Kind == "Deployment" && ref.APIVersion == appsv1.SchemeGroupVersion.String()
}

// forgetEarlierPods deletes the Pods an earlier knit dev published (ones
// matching opts that a Deployment owns): their replicas died with it, and
// the Deployments get new ones. Each is deleted under its UID, so nothing
// created since is touched.
func forgetEarlierPods(ctx context.Context, reader client.Reader, writer client.Writer, opts ...client.ListOption) (int, error) {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	if err := reader.List(ctx, &list, opts...); err != nil {
		return 0, fmt.Errorf("list the Pods of earlier replicas: %w", err)
	}
	n := 0
	for i := range list.Items {
		m := &list.Items[i]
		if !ownedByDeployment(m) {
			continue
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name}}
		err := writer.Delete(ctx, pod, client.Preconditions{UID: &m.UID}, client.GracePeriodSeconds(0))
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return n, fmt.Errorf("delete Pod %s/%s of an earlier replica: %w", m.Namespace, m.Name, err)
		}
		n++
	}
	return n, nil
}

// podReconciler brings one replica's Pod up to date: it creates it, writes
// its status when it changed, deletes it once the replica is gone.
type podReconciler struct{ rt *Runtime }

func (pr *podReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &pr.rt.pods
	select {
	case <-p.earlierGone:
	case <-ctx.Done():
		return ctrl.Result{}, ctx.Err()
	}
	p.mu.Lock()
	rec := p.pods[req.NamespacedName]
	if rec == nil {
		p.mu.Unlock()
		return ctrl.Result{}, nil
	}
	r, uid, deleted, prev, pod := rec.replica, rec.uid, rec.deleted, rec.status, rec.pod
	p.mu.Unlock()

	switch {
	case r == nil:
		// Its delete event changes nothing: deletedByOthers ignores a
		// record without a replica.
		if uid != "" {
			gone := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name}}
			// No grace period: the replica has stopped, as a kubelet
			// confirms a bound Pod's containers are gone.
			err := pr.rt.client.Delete(ctx, gone, client.Preconditions{UID: &uid}, client.GracePeriodSeconds(0))
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return ctrl.Result{}, fmt.Errorf("delete Pod %s of a stopped replica: %w", req.NamespacedName, err)
			}
		}
		p.mu.Lock()
		delete(p.pods, req.NamespacedName)
		p.mu.Unlock()
		return ctrl.Result{}, nil
	case deleted:
		return ctrl.Result{}, nil
	case uid == "" && r.isTerminating():
		// Stopping before its Pod was made: none is made now.
		return ctrl.Result{}, nil
	case uid == "":
		created := pod.DeepCopy()
		if err := pr.rt.client.Create(ctx, created, fieldOwner); err != nil {
			if refused(err) {
				// Admitted on a dry run, refused now: another Pod took the
				// last of a quota meanwhile. The replica stops, and its
				// Deployment says why, as a refused dry run does.
				r.refuse(&failure{Reason: ReasonFailedCreate, Message: err.Error()})
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, fmt.Errorf("create Pod %s: %w", req.NamespacedName, err)
		}
		uid = created.UID
		if !p.recordCreated(req.NamespacedName, r, uid) {
			// Gone, or deleted by someone else, while it was being created.
			p.changed(r)
			return ctrl.Result{}, nil
		}
	}

	status := podStatus(r.spec, r.podSnapshot(), prev, time.Now())
	if prev != nil && equality.Semantic.DeepEqual(*prev, status) {
		return ctrl.Result{}, nil
	}
	// A merge patch of the whole status: the lists replace the old ones,
	// and what the API server set (qosClass) stays. The UID makes it
	// fail on a Pod of the same name that is not this one.
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": uid}, "status": status})
	if err != nil {
		return ctrl.Result{}, err
	}
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name}}
	if err := pr.rt.client.Status().Patch(ctx, target, client.RawPatch(types.MergePatchType, body), fieldOwner); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			p.deletedByOthers(req.NamespacedName, uid)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("write status of Pod %s: %w", req.NamespacedName, err)
	}
	p.mu.Lock()
	if rec := p.pods[req.NamespacedName]; rec != nil && rec.uid == uid {
		rec.status = &status
	}
	p.mu.Unlock()
	return ctrl.Result{}, nil
}

// isTerminating says the replica is stopping.
func (r *replica) isTerminating() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.terminating
}

// refuse stops a replica whose Pod the API server refused, recording why.
func (r *replica) refuse(f *failure) {
	r.rt.podRefused(r, f)
	r.log.Info("Pod refused by the API server; stopping its replica", "reason", f.Message)
	r.stop()
}

// recordCreated notes the UID of the replica's new Pod, unless the
// replica is gone or its Pod was deleted meanwhile.
func (p *podPublisher) recordCreated(key types.NamespacedName, r *replica, uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	rec := p.pods[key]
	if rec == nil {
		return false
	}
	rec.uid, rec.pod = uid, nil
	return rec.replica == r && !rec.deleted
}

// setupPods registers the Pod controller: the runtime's queue of replica
// changes, and a watch of Pods' metadata for deletions by others. The
// Pods an earlier knit dev left are deleted when the manager starts,
// before any is created.
func (rt *Runtime) setupPods(mgr ctrl.Manager) error {
	rt.pods.earlierGone = make(chan struct{})
	onDelete := handler.Funcs{
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workQueue) {
			if ownedByDeployment(e.Object) {
				rt.pods.deletedByOthers(client.ObjectKeyFromObject(e.Object), e.Object.GetUID())
			}
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, _ workQueue) {
			if ownedByDeployment(e.ObjectNew) && e.ObjectNew.GetDeletionTimestamp() != nil {
				rt.pods.terminatingByOthers(client.ObjectKeyFromObject(e.ObjectNew), e.ObjectNew.GetUID())
			}
		},
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("local-runtime-pods").
		WatchesRawSource(rt.pods.source()).
		WatchesMetadata(&corev1.Pod{}, onDelete).
		WithOptions(controller.Options{MaxConcurrentReconciles: podWorkers}).
		Complete(&podReconciler{rt: rt})
	if err != nil {
		return err
	}
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		n, err := forgetEarlierPods(ctx, mgr.GetAPIReader(), mgr.GetClient())
		if err != nil {
			// Not fatal: those Pods name replicas that are gone, no more.
			rt.log.Error(err, "Could not delete the Pods an earlier knit dev left behind")
		} else if n > 0 {
			rt.log.Info("Deleted the Pods an earlier knit dev left behind", "count", n)
		}
		close(rt.pods.earlierGone)
		<-ctx.Done()
		return nil
	}))
}
