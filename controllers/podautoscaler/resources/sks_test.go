package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
)

func TestMakeSKS(t *testing.T) {
	target := corev1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "hello-00001-deployment"}
	pa := &autoscalingv1alpha1.PodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-00001", UID: "pa-uid",
			Labels: map[string]string{"serving.knative.dev/revision": "hello-00001"}, Annotations: map[string]string{"autoscaling.knative.dev/min-scale": "1"}},
		Spec: autoscalingv1alpha1.PodAutoscalerSpec{ScaleTargetRef: target, ProtocolType: autoscalingv1alpha1.ProtocolH2C},
	}
	want := func(mode networkingv1alpha1.ServerlessServiceOperationMode, activators int32) *networkingv1alpha1.ServerlessService {
		return &networkingv1alpha1.ServerlessService{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-00001",
				Labels: map[string]string{"serving.knative.dev/revision": "hello-00001"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "autoscaling.internal.knative.dev/v1alpha1", Kind: "PodAutoscaler",
					Name: "hello-00001", UID: "pa-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: networkingv1alpha1.ServerlessServiceSpec{Mode: mode, NumActivators: activators, ObjectRef: target, ProtocolType: autoscalingv1alpha1.ProtocolH2C},
		}
	}
	tests := []struct {
		name       string
		mode       networkingv1alpha1.ServerlessServiceOperationMode
		activators int32
	}{
		{"serve", networkingv1alpha1.SKSOperationModeServe, 0},
		{"proxy through two activators", networkingv1alpha1.SKSOperationModeProxy, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := MakeSKS(pa, tc.mode, tc.activators)
			if diff := cmp.Diff(want(tc.mode, tc.activators), got); diff != "" {
				t.Errorf("MakeSKS (-want +got):\n%s", diff)
			}
			got.Labels["changed"] = "yes"
			if _, ok := pa.Labels["changed"]; ok {
				t.Error("the SKS shares its labels map with the PodAutoscaler")
			}
		})
	}
}
