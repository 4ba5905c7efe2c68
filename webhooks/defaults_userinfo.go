package webhooks

import (
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// recordUser sets Knative's creator and lastModifier annotations from the
// admission request's user. oldMeta is nil on create. On update the
// creator is kept as it was and lastModifier changes only when the spec
// does. Where Knative refuses an update that drops or edits these
// annotations, knit restores them: a server-side apply from Git that does
// not carry them must not be refused for it.
func recordUser(meta, oldMeta *metav1.ObjectMeta, oldSpec, newSpec any, user string) {
	if oldMeta == nil {
		if user == "" {
			return
		}
		metav1.SetMetaDataAnnotation(meta, servingv1.CreatorAnnotation, user)
		metav1.SetMetaDataAnnotation(meta, servingv1.UpdaterAnnotation, user)
		return
	}
	keepAnnotation(meta, oldMeta, servingv1.CreatorAnnotation)
	if user != "" && !equality.Semantic.DeepEqual(oldSpec, newSpec) {
		metav1.SetMetaDataAnnotation(meta, servingv1.UpdaterAnnotation, user)
		return
	}
	keepAnnotation(meta, oldMeta, servingv1.UpdaterAnnotation)
}

// keepAnnotation makes meta's value for key what oldMeta had, absent included.
func keepAnnotation(meta, oldMeta *metav1.ObjectMeta, key string) {
	if v, ok := oldMeta.Annotations[key]; ok {
		metav1.SetMetaDataAnnotation(meta, key, v)
		return
	}
	delete(meta.Annotations, key)
}
