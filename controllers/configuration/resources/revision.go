// Package resources builds the Revision a Configuration stamps; pure.
package resources

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/names"
)

// RevisionName is the template's explicit name, else Knative's
// <configuration>-<5-digit generation>, shortened to fit 63 characters
// as Knative shortens it (names.Revision).
func RevisionName(cfg *servingv1.Configuration) string {
	if cfg.Spec.Template.Name != "" {
		return cfg.Spec.Template.Name
	}
	return names.Revision(cfg.Name, cfg.Generation)
}

// MakeRevision stamps the Revision for the Configuration's current
// generation: the template's labels and annotations plus the labels that
// tie it to its Configuration (and Service) and generation.
func MakeRevision(cfg *servingv1.Configuration) *servingv1.Revision {
	tmpl := cfg.Spec.Template.DeepCopy()
	labels := tmpl.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	labels[servingv1.ConfigurationLabelKey] = cfg.Name
	labels[servingv1.ConfigurationGenerationLabelKey] = strconv.FormatInt(cfg.Generation, 10)
	if svc := cfg.Labels[servingv1.ServiceLabelKey]; svc != "" {
		labels[servingv1.ServiceLabelKey] = svc
	}
	annotations := tmpl.Annotations
	if who := revisionCreator(cfg); who != "" {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[servingv1.CreatorAnnotation] = who
	}
	return &servingv1.Revision{
		ObjectMeta: metav1.ObjectMeta{
			Name:            RevisionName(cfg),
			Namespace:       cfg.Namespace,
			Labels:          labels,
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cfg, servingv1.GroupVersion.WithKind("Configuration"))},
		},
		Spec: tmpl.Spec,
	}
}

// revisionCreator is whoever last changed the Configuration: that person
// created this Revision, as Knative records it.
func revisionCreator(cfg *servingv1.Configuration) string {
	if who := cfg.Annotations[servingv1.UpdaterAnnotation]; who != "" {
		return who
	}
	return cfg.Annotations[servingv1.CreatorAnnotation]
}
