package endpointslices

import (
	"context"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Uncached adapts a client that reads the API server itself, which knows
// no cache index, to List: it asks for Field by the label instead (what
// the API server does with an index of its own). It is for code that
// runs before any manager has a cache, as knit dev settles the endpoints
// a previous run left behind; the lookups stay those of the cached path.
func Uncached(c client.Client) client.Client { return uncached{c} }

type uncached struct{ client.Client }

func (u uncached) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	if _, ok := list.(*discoveryv1.EndpointSliceList); !ok || o.FieldSelector == nil {
		return u.Client.List(ctx, list, opts...)
	}
	service, ok := o.FieldSelector.RequiresExactMatch(Field)
	if !ok {
		return u.Client.List(ctx, list, opts...)
	}
	req, err := labels.NewRequirement(discoveryv1.LabelServiceName, selection.Equals, []string{service})
	if err != nil {
		return err
	}
	sel := labels.NewSelector()
	if o.LabelSelector != nil {
		sel = o.LabelSelector.DeepCopySelector()
	}
	o.LabelSelector = sel.Add(*req)
	o.FieldSelector = withoutField(o.FieldSelector)
	// The API server reads no cache: there is nothing to copy or not.
	o.UnsafeDisableDeepCopy = nil
	return u.Client.List(ctx, list, o)
}

// withoutField is sel without its requirements on Field; nil when none
// is left.
func withoutField(sel fields.Selector) fields.Selector {
	var rest []fields.Selector
	for _, r := range sel.Requirements() {
		if r.Field != Field {
			rest = append(rest, fields.OneTermEqualSelector(r.Field, r.Value))
		}
	}
	if len(rest) == 0 {
		return nil
	}
	return fields.AndSelectors(rest...)
}
