// Package api gathers every group knit serves into one scheme, so the
// manager, the webhooks and the tests register the same set of kinds.
package api

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	servingv1beta1 "github.com/knitops/knit/api/serving/v1beta1"
)

var schemeBuilder = runtime.NewSchemeBuilder(
	clientgoscheme.AddToScheme,
	apiextensionsv1.AddToScheme,
	servingv1.AddToScheme,
	servingv1beta1.AddToScheme,
	autoscalingv1alpha1.AddToScheme,
	networkingv1alpha1.AddToScheme,
	knitv1alpha1.AddToScheme,
)

// AddToScheme registers Kubernetes' built-in kinds, CRDs and all of knit's.
var AddToScheme = schemeBuilder.AddToScheme

// NewScheme returns a scheme with every kind knit reads or writes.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}
