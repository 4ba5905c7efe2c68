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
		MarkStatus(&s, step.dep, step.pa)
		c := s.GetCondition(duckv1.ConditionReady)
		if diff := cmp.Diff(step.ready, cond{c.Status, c.Reason, c.Message}); diff != "" {
			t.Errorf("%s: Ready (-want +got):\n%s", step.name, diff)
		}
	}
}
