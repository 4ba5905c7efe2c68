package revision

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// A PodAutoscaler whose SKS failed makes the Revision's resources
// unavailable, running replicas or not, and the Revision not Ready with
// the SKS's words; once the SKS recovers the Revision is Ready again, at
// zero replicas too.
func TestMarkStatusSKSFailure(t *testing.T) {
	dep := func(ready int32) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		d.Name, d.Status.ReadyReplicas = "hello-00001-deployment", ready
		return d
	}
	pa := func(sks corev1.ConditionStatus, reason, message string) *autoscalingv1alpha1.PodAutoscaler {
		p := &autoscalingv1alpha1.PodAutoscaler{}
		p.Status.Conditions = duckv1.Conditions{
			{Type: autoscalingv1alpha1.PodAutoscalerConditionActive, Status: corev1.ConditionTrue},
			{Type: autoscalingv1alpha1.PodAutoscalerConditionSKSReady, Status: sks, Reason: reason, Message: message},
		}
		return p
	}
	type cond struct {
		Status          corev1.ConditionStatus
		Reason, Message string
	}
	full := `cannot create Service "hello-00001": range is full`
	var s servingv1.RevisionStatus
	servingv1.RevisionConditions.Manage(&s.Status).InitializeConditions()
	for _, step := range []struct {
		name  string
		dep   *appsv1.Deployment
		pa    *autoscalingv1alpha1.PodAutoscaler
		ready cond
	}{
		{"replicas ready, SKS ready", dep(1), pa(corev1.ConditionTrue, "", ""), cond{Status: corev1.ConditionTrue}},
		{"replicas ready, SKS failed", dep(1), pa(corev1.ConditionFalse, "FailedCreate", full), cond{corev1.ConditionFalse, "FailedCreate", full}},
		{"at zero, SKS still failed", dep(0), pa(corev1.ConditionFalse, "FailedCreate", full), cond{corev1.ConditionFalse, "FailedCreate", full}},
		{"at zero, SKS recovered", dep(0), pa(corev1.ConditionTrue, "", ""), cond{Status: corev1.ConditionTrue}},
	} {
		MarkStatus(&s, step.dep, step.pa, nil)
		c := s.GetCondition(duckv1.ConditionReady)
		if diff := cmp.Diff(step.ready, cond{c.Status, c.Reason, c.Message}); diff != "" {
			t.Errorf("%s: Ready (-want +got):\n%s", step.name, diff)
		}
	}
}

// Every mapping of a Deployment and a PodAutoscaler to the Revision's
// conditions.
func TestMarkStatus(t *testing.T) {
	dep := func(ready int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		d.Name, d.Status.ReadyReplicas, d.Status.Conditions = "hello-00001-deployment", ready, conds
		return d
	}
	failure := appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "CrashLoopBackOff", Message: "back-off"}
	quota := `pods "hello-00001-deployment-abc" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=1, limited: pods=1`
	refused := appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: quota}
	stuck := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: "too slow"}
	pa := func(active corev1.ConditionStatus, reason string, desired *int32) *autoscalingv1alpha1.PodAutoscaler {
		p := &autoscalingv1alpha1.PodAutoscaler{}
		p.Status.DesiredScale = desired
		if active != "" {
			p.Status.Conditions = duckv1.Conditions{{Type: autoscalingv1alpha1.PodAutoscalerConditionActive, Status: active, Reason: reason}}
		}
		return p
	}
	healthy := func(s *servingv1.RevisionStatus) { s.MarkContainerHealthyTrue() }
	two, zero := int32(2), int32(0)
	initializedAtZero := pa(corev1.ConditionFalse, "NoTraffic", &zero)
	initializedAtZero.Status.Conditions = append(initializedAtZero.Status.Conditions,
		duckv1.Condition{Type: autoscalingv1alpha1.PodAutoscalerConditionScaleTargetInitialized, Status: corev1.ConditionTrue})
	tests := []struct {
		name                         string
		before                       func(*servingv1.RevisionStatus)
		dep                          *appsv1.Deployment
		pa                           *autoscalingv1alpha1.PodAutoscaler
		resources, container, active cond
		ready                        cond
		actual                       int32
		desired                      *int32
	}{{
		name: "starting", dep: dep(0), pa: pa("", "", nil),
		resources: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, "waiting for 1 replica(s) of hello-00001-deployment to become ready"},
		container: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, "waiting for 1 replica(s) of hello-00001-deployment to become ready"},
		active:    cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, ""},
		ready:     cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, "waiting for 1 replica(s) of hello-00001-deployment to become ready"},
	}, {
		name: "serving", dep: dep(2), pa: pa(corev1.ConditionTrue, "", &two),
		resources: cond{Status: corev1.ConditionTrue}, container: cond{Status: corev1.ConditionTrue}, active: cond{Status: corev1.ConditionTrue},
		ready: cond{Status: corev1.ConditionTrue}, actual: 2, desired: &two,
	}, {
		name: "crashing", dep: dep(0, failure), pa: pa(corev1.ConditionUnknown, "Queued", nil),
		resources: cond{Status: corev1.ConditionUnknown}, container: cond{corev1.ConditionFalse, "CrashLoopBackOff", "back-off"},
		active: cond{corev1.ConditionUnknown, "Queued", ""}, ready: cond{corev1.ConditionFalse, "CrashLoopBackOff", "back-off"},
	}, {
		// A ResourceQuota, LimitRange or PodSecurity refusing the pods:
		// Knative reads it as the resources being unavailable.
		name: "pods refused", dep: dep(0, refused), pa: pa("", "", nil),
		resources: cond{corev1.ConditionFalse, "FailedCreate", quota}, container: cond{Status: corev1.ConditionUnknown},
		active: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, ""}, ready: cond{corev1.ConditionFalse, "FailedCreate", quota},
	}, {
		name: "crashing past the progress deadline", dep: dep(0, failure, stuck), pa: pa("", "", nil),
		resources: cond{corev1.ConditionFalse, "ProgressDeadlineExceeded", "too slow"}, container: cond{corev1.ConditionFalse, "CrashLoopBackOff", "back-off"},
		active: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, ""}, ready: cond{corev1.ConditionFalse, "ProgressDeadlineExceeded", "too slow"},
	}, {
		name: "never progressing", dep: dep(0, stuck), pa: pa("", "", nil),
		resources: cond{corev1.ConditionFalse, "ProgressDeadlineExceeded", "too slow"}, container: cond{Status: corev1.ConditionUnknown},
		active: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying, ""}, ready: cond{corev1.ConditionFalse, "ProgressDeadlineExceeded", "too slow"},
	}, {
		name: "scaled to zero after serving stays Ready", before: healthy, dep: dep(0), pa: pa(corev1.ConditionFalse, "NoTraffic", nil),
		resources: cond{Status: corev1.ConditionTrue}, container: cond{Status: corev1.ConditionTrue}, active: cond{corev1.ConditionFalse, "NoTraffic", ""},
		ready: cond{Status: corev1.ConditionTrue},
	}, {
		// initial-scale 0: Knative's PodAutoscaler is initialized at zero,
		// and the Revision Ready with no replica ever started.
		name: "initialized at zero", dep: dep(0), pa: initializedAtZero,
		resources: cond{Status: corev1.ConditionTrue}, container: cond{Status: corev1.ConditionTrue}, active: cond{corev1.ConditionFalse, "NoTraffic", ""},
		ready: cond{Status: corev1.ConditionTrue}, desired: &zero,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, got := marked(tc.before, tc.dep, tc.pa, nil, servingv1.RevisionConditionResourcesAvailable,
				servingv1.RevisionConditionContainerHealthy, servingv1.RevisionConditionActive, duckv1.ConditionReady)
			if diff := cmp.Diff([]cond{tc.resources, tc.container, tc.active, tc.ready}, got); diff != "" {
				t.Errorf("ResourcesAvailable, ContainerHealthy, Active, Ready (-want +got):\n%s", diff)
			}
			if *s.ActualReplicas != tc.actual || !cmp.Equal(s.DesiredReplicas, tc.desired) {
				t.Errorf("replicas actual %d desired %v, want %d %v", *s.ActualReplicas, s.DesiredReplicas, tc.actual, tc.desired)
			}
		})
	}
}

// cond is a condition as the status tables compare it.
type cond struct {
	Status          corev1.ConditionStatus
	Reason, Message string
}

// marked is MarkStatus on a fresh status that before (when set) prepared,
// and the conditions of types on it, in order.
func marked(before func(*servingv1.RevisionStatus), dep *appsv1.Deployment, pa *autoscalingv1alpha1.PodAutoscaler, pods []corev1.Pod,
	types ...duckv1.ConditionType) (servingv1.RevisionStatus, []cond) {
	var s servingv1.RevisionStatus
	s.InitializeConditions()
	if before != nil {
		before(&s)
	}
	MarkStatus(&s, dep, pa, pods)
	got := make([]cond, len(types))
	for i, ct := range types {
		c := s.GetCondition(ct)
		got[i] = cond{c.Status, c.Reason, c.Message}
	}
	return s, got
}
