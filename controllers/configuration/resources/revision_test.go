package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestMakeRevision(t *testing.T) {
	owner := []metav1.OwnerReference{{APIVersion: "serving.knative.dev/v1", Kind: "Configuration", Name: "hello", UID: "cfg-uid",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	spec := servingv1.RevisionSpec{PodSpec: servingv1.PodSpec{Containers: []corev1.Container{{Image: "example.com/hello"}}}}
	configuration := func(mutate func(*servingv1.Configuration)) *servingv1.Configuration {
		cfg := &servingv1.Configuration{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello", UID: "cfg-uid", Generation: 3}}
		cfg.Spec.Template.Spec = spec
		mutate(cfg)
		return cfg
	}
	tests := []struct {
		name string
		cfg  *servingv1.Configuration
		want *servingv1.Revision
	}{{
		name: "Knative's name for the generation, the labels that tie it to its Configuration",
		cfg:  configuration(func(*servingv1.Configuration) {}),
		want: &servingv1.Revision{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-00003", OwnerReferences: owner, Labels: map[string]string{
				servingv1.ConfigurationLabelKey: "hello", servingv1.ConfigurationGenerationLabelKey: "3",
			}},
			Spec: spec,
		},
	}, {
		name: "the template's name, labels and annotations; the Service's label; who changed the Configuration last",
		cfg: configuration(func(cfg *servingv1.Configuration) {
			cfg.Labels = map[string]string{servingv1.ServiceLabelKey: "hello", "team": "web"}
			cfg.Annotations = map[string]string{servingv1.CreatorAnnotation: "ada", servingv1.UpdaterAnnotation: "grace"}
			cfg.Spec.Template.Name = "hello-v2"
			cfg.Spec.Template.Labels = map[string]string{"tier": "front"}
			cfg.Spec.Template.Annotations = map[string]string{"autoscaling.knative.dev/min-scale": "1"}
		}),
		want: &servingv1.Revision{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-v2", OwnerReferences: owner,
				Labels: map[string]string{
					"tier": "front", servingv1.ConfigurationLabelKey: "hello", servingv1.ConfigurationGenerationLabelKey: "3", servingv1.ServiceLabelKey: "hello",
				},
				Annotations: map[string]string{"autoscaling.knative.dev/min-scale": "1", servingv1.CreatorAnnotation: "grace"},
			},
			Spec: spec,
		},
	}, {
		name: "the creator when nobody changed it since",
		cfg: configuration(func(cfg *servingv1.Configuration) {
			cfg.Annotations = map[string]string{servingv1.CreatorAnnotation: "ada"}
		}),
		want: &servingv1.Revision{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-00003", OwnerReferences: owner,
				Labels:      map[string]string{servingv1.ConfigurationLabelKey: "hello", servingv1.ConfigurationGenerationLabelKey: "3"},
				Annotations: map[string]string{servingv1.CreatorAnnotation: "ada"},
			},
			Spec: spec,
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.cfg.DeepCopy()
			if diff := cmp.Diff(tc.want, MakeRevision(tc.cfg)); diff != "" {
				t.Errorf("MakeRevision (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.cfg); diff != "" {
				t.Errorf("MakeRevision changed the Configuration (-before +after):\n%s", diff)
			}
		})
	}
}

// A Configuration's Revision is named as Knative names it: the generation
// appended, shortened (kmeta.ChildName's rule) when that passes 63
// characters, so a long Configuration still gets Revisions.
func TestRevisionName(t *testing.T) {
	for _, tc := range []struct {
		name, cfg, template string
		generation          int64
		want                string
	}{
		{name: "short", cfg: "hello", generation: 3, want: "hello-00003"},
		{name: "the template's name", cfg: "hello", template: "hello-v2", generation: 3, want: "hello-v2"},
		{name: "57 characters fit", cfg: "configuration-with-a-name-long-enough-to-fit-exactly-abcd", generation: 1,
			want: "configuration-with-a-name-long-enough-to-fit-exactly-abcd-00001"},
		{name: "60 characters are shortened", cfg: "configuration-with-a-name-long-enough-to-need-a-hash-abcdefg", generation: 1,
			want: "configuration-with-a-namea1e223d4efdcde925d120cfcff8aa44a-00001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &servingv1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: tc.cfg, Generation: tc.generation}}
			cfg.Spec.Template.Name = tc.template
			if diff := cmp.Diff(tc.want, RevisionName(cfg)); diff != "" {
				t.Errorf("RevisionName (-want +got):\n%s", diff)
			}
		})
	}
}
