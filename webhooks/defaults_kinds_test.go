package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestDefaultService(t *testing.T) {
	s := service("hello", bareSpec(corev1.Container{Image: image}))
	defaultService(s, nil, "alice", DefaultConfig())
	want := service("hello", defaultedSpec(), latest(100))
	want.Annotations = map[string]string{servingv1.CreatorAnnotation: "alice", servingv1.UpdaterAnnotation: "alice"}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("defaultService (-want +got):\n%s", diff)
	}

	update := s.DeepCopy()
	update.Spec.Template.Spec.Containers[0].Image = "v2"
	defaultService(update, s, "bob", DefaultConfig())
	if got := update.Annotations[servingv1.UpdaterAnnotation]; got != "bob" {
		t.Errorf("lastModifier after a spec change = %q, want bob", got)
	}
}

func TestDefaultConfigurationOwnedByService(t *testing.T) {
	c := &servingv1.Configuration{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", OwnerReferences: []metav1.OwnerReference{{Kind: "Service", Name: "hello"}}},
		Spec:       servingv1.ConfigurationSpec{Template: servingv1.RevisionTemplateSpec{Spec: bareSpec(corev1.Container{Image: image})}},
	}
	defaultConfiguration(c, nil, "system:serviceaccount:knit:controller", DefaultConfig())
	want := &servingv1.Configuration{
		ObjectMeta: c.ObjectMeta,
		Spec:       servingv1.ConfigurationSpec{Template: servingv1.RevisionTemplateSpec{Spec: defaultedSpec()}},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("defaultConfiguration (-want +got):\n%s", diff)
	}
}

func TestDefaultRevision(t *testing.T) {
	r := &servingv1.Revision{ObjectMeta: metav1.ObjectMeta{Name: "hello-00001"}, Spec: bareSpec(corev1.Container{Image: image})}
	defaultRevision(r, nil, "alice", DefaultConfig())
	want := &servingv1.Revision{ObjectMeta: metav1.ObjectMeta{Name: "hello-00001"}, Spec: defaultedSpec()}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("defaultRevision (-want +got):\n%s", diff)
	}
}

func TestDefaultRoute(t *testing.T) {
	r := &servingv1.Route{
		ObjectMeta: metav1.ObjectMeta{Name: "hello"},
		Spec:       servingv1.RouteSpec{Traffic: []servingv1.TrafficTarget{{ConfigurationName: "hello", Percent: ptr.To[int64](100)}}},
	}
	defaultRoute(r, nil, "alice", DefaultConfig())
	want := &servingv1.Route{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Annotations: map[string]string{
			servingv1.CreatorAnnotation: "alice", servingv1.UpdaterAnnotation: "alice",
		}},
		Spec: servingv1.RouteSpec{Traffic: []servingv1.TrafficTarget{{ConfigurationName: "hello", LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}}},
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("defaultRoute (-want +got):\n%s", diff)
	}
}
