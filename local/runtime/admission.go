package runtime

import (
	"context"
	"slices"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
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
//
// Where nothing could refuse or change the Pod (no quota, LimitRange or
// PodSecurity level in its namespace, no webhook or policy on pods: most
// of knit dev's namespaces) the dry run is skipped, and the Pod is
// admitted as it is: a dry run is a few milliseconds on a cold start's
// path. Its real create still goes through admission, and a refusal
// then stops the replica (podReconciler); askFirst, set once a Pod of the
// template was refused, makes the next one ask first whatever the
// namespace looks like, so a refusal the namespace does not show (a
// quota made between look and create, a webhook's mood) runs no process
// again.
func (rt *Runtime) admit(ctx context.Context, pod *corev1.Pod, askFirst bool) (*corev1.Pod, *failure, error) {
	if !askFirst && !classesNamed(&pod.Spec) && !rt.mayRefuse(ctx, pod.Namespace) {
		return pod, nil, nil
	}
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

// applyAdmitted gives the replica's containers and init containers the
// resources admission settled on (a LimitRange's defaults), so its
// cgroups get the limits the Pod shows, and the replica what admission
// gave the pod for the scheduler to read: the overhead, node selector
// and tolerations of its RuntimeClass, the default tolerations, its
// priority.
func applyAdmitted(spec *corev1.PodSpec, admitted *corev1.Pod) {
	admittedResources(spec.Containers, admitted.Spec.Containers)
	admittedResources(spec.InitContainers, admitted.Spec.InitContainers)
	spec.Overhead, spec.NodeSelector, spec.Tolerations = admitted.Spec.Overhead, admitted.Spec.NodeSelector, admitted.Spec.Tolerations
	spec.Priority = admitted.Spec.Priority
}

// classesNamed reports a pod naming a RuntimeClass or a PriorityClass,
// which the API server's admission resolves on every create (the
// RuntimeClass and Priority plugins): it refuses one that does not exist
// ("pod rejected: RuntimeClass \"x\" not found", "no PriorityClass with
// name x was found") and sets the overhead, scheduling and priority of
// one that does. Such a pod is always dry-run first, so a refusal runs
// no process and what admission sets reaches the replica.
func classesNamed(spec *corev1.PodSpec) bool {
	return spec.RuntimeClassName != nil || spec.PriorityClassName != ""
}

// admittedResources gives each of containers the resources of its
// namesake in admitted.
func admittedResources(containers, admitted []corev1.Container) {
	for i := range containers {
		for _, a := range admitted {
			if a.Name == containers[i].Name {
				containers[i].Resources = a.Resources
			}
		}
	}
}

// mayRefuse says whether anything in the API server could refuse or
// change a Pod in namespace: its deletion, a PodSecurity level it enforces, a
// ResourceQuota or LimitRange in it, or any admission webhook or
// validating policy that may see pods. Read from the manager's cache; an
// error reading says yes.
func (rt *Runtime) mayRefuse(ctx context.Context, namespace string) bool {
	var ns corev1.Namespace
	if err := rt.client.Get(ctx, client.ObjectKey{Name: namespace}, &ns); err != nil || ns.DeletionTimestamp != nil {
		return true // no namespace to read, or one that refuses every new Pod
	}
	for k := range ns.Labels {
		if strings.HasPrefix(k, "pod-security.kubernetes.io/enforce") {
			return true
		}
	}
	var quotas corev1.ResourceQuotaList
	var ranges corev1.LimitRangeList
	var validating admissionv1.ValidatingWebhookConfigurationList
	var mutating admissionv1.MutatingWebhookConfigurationList
	var policies admissionv1.ValidatingAdmissionPolicyBindingList
	for _, list := range []client.ObjectList{&quotas, &ranges} {
		if err := rt.client.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return true
		}
	}
	for _, list := range []client.ObjectList{&validating, &mutating, &policies} {
		if err := rt.client.List(ctx, list); err != nil {
			return true
		}
	}
	if len(quotas.Items) > 0 || len(ranges.Items) > 0 || len(policies.Items) > 0 {
		return true
	}
	var rules [][]admissionv1.RuleWithOperations
	for _, w := range validating.Items {
		for _, h := range w.Webhooks {
			rules = append(rules, h.Rules)
		}
	}
	for _, w := range mutating.Items {
		for _, h := range w.Webhooks {
			rules = append(rules, h.Rules)
		}
	}
	return slices.ContainsFunc(rules, rulesSeePods)
}

// rulesSeePods says whether a webhook's rules may match a pod's create.
func rulesSeePods(rules []admissionv1.RuleWithOperations) bool {
	for _, r := range rules {
		creates := slices.Contains(r.Operations, admissionv1.Create) || slices.Contains(r.Operations, admissionv1.OperationAll)
		core := slices.Contains(r.APIGroups, "") || slices.Contains(r.APIGroups, "*")
		pods := slices.ContainsFunc(r.Resources, func(s string) bool { return s == "pods" || s == "*" || s == "*/*" })
		if creates && core && pods {
			return true
		}
	}
	return false
}
