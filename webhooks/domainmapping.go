package webhooks

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1beta1 "github.com/knitops/knit/api/serving/v1beta1"
)

// clusterLocalDomain is the suffix of in-cluster names; a DomainMapping
// may not claim one, or it could answer for another namespace's Service
// inside the cluster.
const clusterLocalDomain = "cluster.local"

// defaultDomainMapping fills spec.ref.namespace with the DomainMapping's
// own, as Knative's KReference defaulting does, and records the user.
func defaultDomainMapping(dm, old *servingv1beta1.DomainMapping, user string, _ Config) {
	if dm.Spec.Ref.Namespace == "" {
		dm.Spec.Ref.Namespace = dm.Namespace
	}
	var oldMeta *metav1.ObjectMeta
	var oldSpec *servingv1beta1.DomainMappingSpec
	if old != nil {
		oldMeta, oldSpec = &old.ObjectMeta, &old.Spec
	}
	recordUser(&dm.ObjectMeta, oldMeta, oldSpec, &dm.Spec, user)
}

// validateDomainMapping is Knative's DomainMapping.Validate: the name is
// the domain, a fully qualified one outside the cluster's own; the
// reference names its kind, version and name, in the DomainMapping's
// namespace (Knative's cross-namespace references are a feature knit
// does not offer: a namespace must not publish another's Service).
func validateDomainMapping(dm, _ *servingv1beta1.DomainMapping, _ Config) field.ErrorList {
	var errs field.ErrorList
	meta := field.NewPath("metadata")
	if dm.GenerateName != "" {
		errs = append(errs, field.Forbidden(meta.Child("generateName"), "must not set the field(s)"))
	}
	if bad := validation.IsFullyQualifiedDomainName(meta.Child("name"), dm.Name); len(bad) > 0 {
		errs = append(errs, field.Invalid(meta.Child("name"), dm.Name, bad.ToAggregate().Error()))
	}
	if strings.HasSuffix(dm.Name, "."+clusterLocalDomain) {
		errs = append(errs, field.Invalid(meta.Child("name"), dm.Name,
			fmt.Sprintf("must not be a subdomain of cluster local domain %q", clusterLocalDomain)))
	}
	errs = append(errs, validateHTTPProtocol(dm.Annotations, meta.Child("annotations"))...)
	ref, path := dm.Spec.Ref, field.NewPath("spec", "ref")
	if ref.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	}
	if ref.Kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), ""))
	}
	if ref.APIVersion == "" {
		errs = append(errs, field.Required(path.Child("apiVersion"), ""))
	}
	if ref.Namespace != "" && ref.Namespace != dm.Namespace {
		errs = append(errs, field.Invalid(path.Child("namespace"), ref.Namespace,
			fmt.Sprintf("mismatched namespaces: parent %q, reference %q", dm.Namespace, ref.Namespace)))
	}
	if dm.Spec.TLS != nil {
		if bad := validation.IsDNS1123Subdomain(dm.Spec.TLS.SecretName); len(bad) > 0 {
			errs = append(errs, field.Invalid(field.NewPath("spec", "tls", "secretName"), dm.Spec.TLS.SecretName, strings.Join(bad, "; ")))
		}
	}
	return errs
}
