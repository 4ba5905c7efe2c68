package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func service() *servingv1.Service {
	svc := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: "hello", UID: "svc-uid",
		Labels:      map[string]string{"knit.dev/repository": "hello"},
		Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}", servingv1.CreatorAnnotation: "ada"},
	}}
	svc.Spec.Template.Spec.Containers = []corev1.Container{{Image: "example.com/hello"}}
	return svc
}

// wantMeta is what both children carry: the Service's name, labels (and
// its own), annotations but kubectl's, and the Service as controller.
func wantMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Namespace: "default", Name: "hello",
		Labels:      map[string]string{"knit.dev/repository": "hello", servingv1.ServiceLabelKey: "hello"},
		Annotations: map[string]string{servingv1.CreatorAnnotation: "ada"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "serving.knative.dev/v1", Kind: "Service", Name: "hello", UID: "svc-uid",
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
	}
}

func TestMakeConfiguration(t *testing.T) {
	svc := service()
	want := &servingv1.Configuration{ObjectMeta: wantMeta(), Spec: svc.Spec.ConfigurationSpec}
	if diff := cmp.Diff(want, MakeConfiguration(svc)); diff != "" {
		t.Errorf("MakeConfiguration (-want +got):\n%s", diff)
	}
}

func TestMakeRoute(t *testing.T) {
	tests := []struct {
		name          string
		traffic, want []servingv1.TrafficTarget
	}{{
		name: "none",
	}, {
		name:    "the latest revision follows the Service's Configuration",
		traffic: []servingv1.TrafficTarget{{LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}},
		want:    []servingv1.TrafficTarget{{ConfigurationName: "hello", LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}},
	}, {
		name: "latestRevision unset follows it too; a pinned Revision and latestRevision false stay as written",
		traffic: []servingv1.TrafficTarget{
			{Tag: "current", Percent: ptr.To[int64](90)},
			{RevisionName: "hello-00001", Percent: ptr.To[int64](10)},
			{Tag: "off", LatestRevision: ptr.To(false)},
		},
		want: []servingv1.TrafficTarget{
			{ConfigurationName: "hello", Tag: "current", Percent: ptr.To[int64](90)},
			{RevisionName: "hello-00001", Percent: ptr.To[int64](10)},
			{Tag: "off", LatestRevision: ptr.To(false)},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := service()
			svc.Spec.Traffic = tc.traffic
			before := svc.DeepCopy()
			want := &servingv1.Route{ObjectMeta: wantMeta(), Spec: servingv1.RouteSpec{Traffic: tc.want}}
			if diff := cmp.Diff(want, MakeRoute(svc)); diff != "" {
				t.Errorf("MakeRoute (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, svc); diff != "" {
				t.Errorf("MakeRoute changed the Service (-before +after):\n%s", diff)
			}
		})
	}
}

// TestMakeRouteRolloutDuration: the Service's rollout-duration reaches
// its Route, where the Route controller reads it.
func TestMakeRouteRolloutDuration(t *testing.T) {
	svc := service()
	svc.Annotations["serving.knative.dev/rollout-duration"] = "380s"
	if got := MakeRoute(svc).Annotations["serving.knative.dev/rollout-duration"]; got != "380s" {
		t.Errorf("Route's rollout-duration = %q, want the Service's 380s", got)
	}
}
