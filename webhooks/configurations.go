package webhooks

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// Names of the webhook configurations Configurations builds; on a cluster
// the chart creates them and knit patches their caBundle.
const (
	DefaultingName = "knit-defaulting"
	ValidationName = "knit-validation"
)

// admitted are the kinds admission covers, with their resource names.
var admitted = []struct{ kind, resource, version string }{
	{"Service", "services", "v1"},
	{"Configuration", "configurations", "v1"},
	{"Revision", "revisions", "v1"},
	{"Route", "routes", "v1"},
	{"DomainMapping", "domainmappings", "v1beta1"},
}

// Configurations builds the registrations that send CREATE and UPDATE of
// each serving.knative.dev kind to the webhooks Setup serves.
// clientConfig says how the API server reaches a webhook path (a URL for
// knit dev, a Service in a cluster) and carries the caBundle. Requests fail
// when the webhook cannot answer, so nothing is stored unchecked.
func Configurations(clientConfig func(path string) admissionregistrationv1.WebhookClientConfig) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: DefaultingName},
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: ValidationName},
	}
	for _, a := range admitted {
		rules := []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{
				APIGroups:   []string{servingv1.GroupVersion.Group},
				APIVersions: []string{a.version},
				Resources:   []string{a.resource},
				Scope:       ptr.To(admissionregistrationv1.NamespacedScope),
			},
		}}
		mutating.Webhooks = append(mutating.Webhooks, admissionregistrationv1.MutatingWebhook{
			Name:                    a.resource + ".defaulting.knit.dev",
			ClientConfig:            clientConfig(webhookPath("mutate", a.version, a.kind)),
			Rules:                   rules,
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		})
		validating.Webhooks = append(validating.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name:                    a.resource + ".validation.knit.dev",
			ClientConfig:            clientConfig(webhookPath("validate", a.version, a.kind)),
			Rules:                   rules,
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		})
	}
	return mutating, validating
}

// webhookPath is the path controller-runtime's builder serves a kind's
// webhook at, e.g. /mutate-serving-knative-dev-v1-service.
func webhookPath(verb, version, kind string) string {
	return "/" + verb + "-" + strings.ReplaceAll(servingv1.GroupVersion.Group, ".", "-") + "-" + version + "-" + strings.ToLower(kind)
}
