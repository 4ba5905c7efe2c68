package runtime

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReasonFailedCreate is the ReplicaSet controller's ReplicaFailure reason
// when the API server refuses a pod: a ResourceQuota exceeded, a
// LimitRange or PodSecurity level violated, a webhook's no.
const ReasonFailedCreate = "FailedCreate"

// admissionRetry paces asking again when the API server could not answer
// (not when it refused).
const admissionRetry = 500 * time.Millisecond

// admit asks the API server whether pod may be created, as the ReplicaSet
// controller's create would ask it, without storing it (a dry run, which
// runs every admission plugin and webhook but writes nothing): the
// replica must not run a process its Pod would be refused for. It returns
// the Pod as admitted (a LimitRange's default requests and limits filled
// in), or the refusal. An API server that cannot answer is asked again
// until ctx ends.
func (rt *Runtime) admit(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, *failure, error) {
	for {
		admitted := pod.DeepCopy()
		err := rt.client.Create(ctx, admitted, client.DryRunAll, fieldOwner)
		switch {
		case err == nil:
			return admitted, nil, nil
		case refused(err):
			return nil, &failure{Reason: ReasonFailedCreate, Message: err.Error()}, nil
		}
		rt.log.V(1).Info("Pod admission not answered; asking again", "pod", pod.Name, "error", err.Error())
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(admissionRetry):
		}
	}
}

// refused says the API server answered no to a create, for a reason the
// pod's spec or its namespace's policy must change to mend.
func refused(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsNotFound(err) // its namespace is gone or going
}

// applyAdmitted gives the replica's containers the resources admission
// settled on (a LimitRange's defaults), so its cgroups get the limits the
// Pod shows.
func applyAdmitted(spec *corev1.PodSpec, admitted *corev1.Pod) {
	for i := range spec.Containers {
		for _, a := range admitted.Spec.Containers {
			if a.Name == spec.Containers[i].Name {
				spec.Containers[i].Resources = a.Resources
			}
		}
	}
}
