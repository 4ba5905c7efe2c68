package webhooks

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// routingStateModifiedAnnotation is what the Route reconciler stamps on a
// Revision each time it routes to it or stops, with an RFC 3339 time in
// UTC; it counts towards the Revision's annotations like the user's.
const routingStateModifiedAnnotation = "serving.knative.dev/routingStateModified"

// routingStateModifiedValue has the length of every value the Route
// reconciler writes.
const routingStateModifiedValue = "2006-01-02T15:04:05Z"

// validateDerivedMetadata refuses labels and annotations the API server
// would refuse on the objects knit derives from them: a template's become
// a Revision's (with the creator and routing-state annotations knit adds)
// and its Deployment's pods'. The API server checks a Service's and a
// Configuration's own metadata, but a template is only spec to it, so
// without this a template it would accept leaves a Service whose Revision
// can never be created. creator is the creator annotation knit will add
// ("" when annotations already hold it); path is the metadata's.
func validateDerivedMetadata(labels, annotations map[string]string, creator string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(labels)) { // one at a time: in a stable order
		errs = append(errs, metav1validation.ValidateLabels(map[string]string{k: labels[k]}, path.Child("labels"))...)
	}
	annPath := path.Child("annotations")
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		// The API server's rule: a qualified name, in any case.
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(annPath, k, msg))
		}
	}
	derived := maps.Clone(annotations)
	if derived == nil {
		derived = map[string]string{}
	}
	if creator != "" {
		derived[servingv1.CreatorAnnotation] = creator
	}
	derived[routingStateModifiedAnnotation] = routingStateModifiedValue
	if size, limit := annotationBytes(derived), apimachineryvalidation.TotalAnnotationSizeLimitB; size > limit {
		errs = append(errs, &field.Error{Type: field.ErrorTypeTooLong, Field: annPath.String(), BadValue: "<value omitted>",
			Detail: fmt.Sprintf("may not be more than %d bytes in all, the Kubernetes limit, counting the %d bytes knit adds to the Revision; these come to %d",
				limit, size-annotationBytes(annotations), size)})
	}
	return errs
}

// annotationBytes counts annotations as the API server does: keys and
// values.
func annotationBytes(annotations map[string]string) int {
	n := 0
	for k, v := range annotations {
		n += len(k) + len(v)
	}
	return n
}

// templateCreator is the creator annotation knit will give the Revision
// stamped from a template under parent: whoever last changed parent, as
// the Configuration reconciler records it.
func templateCreator(parent map[string]string) string {
	if who := parent[servingv1.UpdaterAnnotation]; who != "" {
		return who
	}
	return parent[servingv1.CreatorAnnotation]
}
