package webhooks

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servingv1beta1 "github.com/knitops/knit/api/serving/v1beta1"
)

func domainMapping(name string, mut ...func(*servingv1beta1.DomainMapping)) *servingv1beta1.DomainMapping {
	dm := &servingv1beta1.DomainMapping{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
		Spec: servingv1beta1.DomainMappingSpec{Ref: servingv1beta1.KReference{
			APIVersion: "serving.knative.dev/v1", Kind: "Service", Name: "web", Namespace: "shop"}},
	}
	for _, m := range mut {
		m(dm)
	}
	return dm
}

// Admission refuses what Knative's DomainMapping.Validate refuses, in
// its words, and only that.
func TestValidateDomainMapping(t *testing.T) {
	for _, tc := range []struct {
		name string
		dm   *servingv1beta1.DomainMapping
		want string // "" accepts
	}{
		{name: "a domain and a Service", dm: domainMapping("shop.example.com")},
		{name: "a bring-your-own certificate", dm: domainMapping("shop.example.com", func(dm *servingv1beta1.DomainMapping) {
			dm.Spec.TLS = &servingv1beta1.SecretTLS{SecretName: "shop-tls"}
		})},
		{name: "one label is not a domain", dm: domainMapping("shop"), want: "invalid value: shop: metadata.name"},
		{name: "uppercase", dm: domainMapping("Shop.example.com"), want: "metadata.name"},
		{name: "the cluster's own names", dm: domainMapping("web.shop.svc.cluster.local"),
			want: `must not be a subdomain of cluster local domain "cluster.local"`},
		{name: "generateName", dm: domainMapping("shop.example.com", func(dm *servingv1beta1.DomainMapping) { dm.GenerateName = "shop-" }),
			want: "must not set the field(s): metadata.generateName"},
		{name: "no ref name", dm: domainMapping("shop.example.com", func(dm *servingv1beta1.DomainMapping) { dm.Spec.Ref.Name = "" }),
			want: "missing field(s): spec.ref.name"},
		{name: "no kind", dm: domainMapping("shop.example.com", func(dm *servingv1beta1.DomainMapping) { dm.Spec.Ref.Kind = "" }),
			want: "missing field(s): spec.ref.kind"},
		{name: "no apiVersion", dm: domainMapping("shop.example.com", func(dm *servingv1beta1.DomainMapping) { dm.Spec.Ref.APIVersion = "" }),
			want: "missing field(s): spec.ref.apiVersion"},
		{name: "another namespace's Service", dm: domainMapping("shop.example.com", func(dm *servingv1beta1.DomainMapping) { dm.Spec.Ref.Namespace = "bank" }),
			want: `mismatched namespaces: parent "shop", reference "bank"`},
		{name: "a bad http-protocol", dm: domainMapping("shop.example.com", func(dm *servingv1beta1.DomainMapping) {
			dm.Annotations = map[string]string{"networking.knative.dev/http-protocol": "sometimes"}
		}), want: "http-protocol"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := validateDomainMapping(tc.dm, nil, DefaultConfig())
			got := ""
			if len(errs) > 0 {
				got = knativeMessage(errs)
			}
			switch {
			case tc.want == "" && got != "":
				t.Errorf("refused: %s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("got %q, want it to contain %q", got, tc.want)
			}
		})
	}
}

// The reference's namespace defaults to the DomainMapping's, and the
// creator is recorded once.
func TestDefaultDomainMapping(t *testing.T) {
	dm := domainMapping("shop.example.com", func(dm *servingv1beta1.DomainMapping) { dm.Spec.Ref.Namespace = "" })
	defaultDomainMapping(dm, nil, "alice", DefaultConfig())
	if dm.Spec.Ref.Namespace != "shop" {
		t.Errorf("ref namespace %q, want shop", dm.Spec.Ref.Namespace)
	}
	if got := dm.Annotations["serving.knative.dev/creator"]; got != "alice" {
		t.Errorf("creator %q, want alice", got)
	}
}
