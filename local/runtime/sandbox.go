package runtime

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/local/view"
)

// ociHandler is the one runtime handler knit dev has, as containerd's
// default configuration names runc: a RuntimeClass must name it for its
// pods to run here.
const ociHandler = "runc"

// openSandbox does for a placed replica what the kubelet does when it
// creates a pod's sandbox, before any container starts: it looks up the
// pod's RuntimeClass handler (sandboxRuntime) and, for a pod that shares
// its process namespace, makes the namespace the containers of images
// join (sharedPIDNamespace). A sandbox that cannot be made is reported as
// the kubelet reports it — every container waiting, the pod Pending, the
// kubelet's FailedCreatePodSandBox words — and tried again with the
// containers' backoff, as the kubelet retries: a RuntimeClass created or
// mended meanwhile starts the replica. False when ctx ended first.
func (r *replica) openSandbox(ctx context.Context) bool {
	for attempt := 1; ; attempt++ {
		f := r.sandboxRuntime(ctx)
		if f == nil {
			f = r.sharedPIDNamespace()
		}
		if f == nil {
			r.sandboxFailed(nil)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		r.log.Info("Pod sandbox cannot be made", "reason", f.Reason, "message", f.Message)
		r.sandboxFailed(f)
		if !sleepCtx(ctx, r.rt.opts.Backoff.Delay(attempt)) {
			return false
		}
	}
}

// closeSandbox ends what openSandbox made, once every container is gone.
func (r *replica) closeSandbox() {
	if err := r.pidNS.Close(); err != nil {
		r.log.Error(err, "Replica PID namespace not removed")
	}
}

// sandboxFailed reports f (nil: no longer) on every container and init
// container of the replica, none of which can start without a sandbox.
func (r *replica) sandboxFailed(f *failure) {
	for i := range r.spec.InitContainers {
		r.update(initContainer(i), func(s *containerState) { s.setup = f })
	}
	for i := range r.spec.Containers {
		r.update(regular(i), func(s *containerState) { s.setup = f })
	}
}

// sandboxRuntime is the kubelet's look-up of the pod's runtime handler:
// no runtimeClassName is the default handler, runc; a RuntimeClass that
// no longer exists (admission refuses a pod naming one that never did)
// or names a handler other than runc fails the sandbox with the words of
// the kubelet and of containerd, which has no other runtime configured.
// knit dev runs every container of a handler-runc pod as it runs any
// other — images with runc, ko:// and knit:// as processes.
func (r *replica) sandboxRuntime(ctx context.Context) *failure {
	name := r.spec.RuntimeClassName
	if name == nil {
		return nil
	}
	var rc nodev1.RuntimeClass
	err := r.rt.reader.Get(ctx, client.ObjectKey{Name: *name}, &rc)
	switch {
	case apierrors.IsNotFound(err):
		return sandboxFailure(err.Error()) // runtimeclass.node.k8s.io "x" not found
	case err != nil:
		return sandboxFailure(fmt.Sprintf("failed to lookup RuntimeClass %s: %v", *name, err))
	case rc.Handler != ociHandler:
		return sandboxFailure(fmt.Sprintf(
			"rpc error: code = Unknown desc = unable to get OCI runtime for sandbox %q: no runtime for %q is configured (knit dev's only runtime handler is %q)",
			r.pod.Name, rc.Handler, ociHandler))
	}
	return nil
}

// sandboxFailure is the kubelet's FailedCreatePodSandBox with its words.
func sandboxFailure(why string) *failure {
	return &failure{Reason: ReasonFailedCreatePodSandBox, Message: "Failed to create pod sandbox: " + why}
}

// sharedPIDNamespace makes the replica's PID namespace when its pod sets
// shareProcessNamespace and runs a container of an image: each run of
// one joins it (joinPIDNamespace), where the pause process (pause) is PID
// 1, as in a pod, and the containers see and signal each other's
// processes. A container of knit dev's own making (ko://, knit://) runs
// in this machine's PID namespace, where every process is visible to it
// already, the replica's others included; it does not join the replica's
// (its /proc is this machine's, which would name its processes by other
// numbers than its own getpid), so an image's container does not see it.
func (r *replica) sharedPIDNamespace() *failure {
	if r.pidNS != nil || !ptr.Deref(r.spec.ShareProcessNamespace, false) || r.rt.opts.OCI == nil || !runsImages(r.spec) {
		return nil
	}
	ns, err := view.OpenPIDNamespace(r.rt.instance)
	if err != nil {
		return sandboxFailure(err.Error())
	}
	r.pidNS = ns
	return nil
}

// runsImages reports a pod with a container or init container of an
// image, which runc runs.
func runsImages(spec *corev1.PodSpec) bool {
	isImage := func(c corev1.Container) bool { return ociImage(&c) }
	return slices.ContainsFunc(spec.Containers, isImage) || slices.ContainsFunc(spec.InitContainers, isImage)
}
