//go:build !unit

package charttest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/webhooks"
)

// The chart's knit-defaulting and knit-validation are what
// webhooks.Configurations builds for the knit-webhook Service, but for
// the caBundle (the controller patches it in) and the chart's labels.
func TestWebhookConfigurationsMatchGo(t *testing.T) {
	m := render(t)
	wantMutating, wantValidating := webhooks.Configurations(func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: config.SystemNamespace, Name: "knit-webhook", Path: ptr.To(path), Port: ptr.To[int32](443),
		}}
	})

	var mutating admissionregistrationv1.MutatingWebhookConfiguration
	m.into(t, "MutatingWebhookConfiguration", wantMutating.Name, &mutating)
	mutating.Labels = nil
	if diff := cmp.Diff(wantMutating, &mutating); diff != "" {
		t.Errorf("MutatingWebhookConfiguration %s (-Go +chart):\n%s", wantMutating.Name, diff)
	}

	var validating admissionregistrationv1.ValidatingWebhookConfiguration
	m.into(t, "ValidatingWebhookConfiguration", wantValidating.Name, &validating)
	validating.Labels = nil
	if diff := cmp.Diff(wantValidating, &validating); diff != "" {
		t.Errorf("ValidatingWebhookConfiguration %s (-Go +chart):\n%s", wantValidating.Name, diff)
	}
}
