package platform

import (
	"net/url"
	"slices"

	"k8s.io/client-go/rest"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/gitsync/egress"
)

// EgressPolicy is where knit connects on a user's behalf, for EventSink
// deliveries and GitRepository fetches: config-network's egress-allow as
// store holds it at each call (an operator's edit applies to the next
// connection), plus allow; refused besides loopback, link-local and
// unspecified addresses are the control plane's own: this machine's or
// pod's interfaces and the API server api reaches.
func EgressPolicy(api *rest.Config, store *config.Store, allow ...egress.Rule) func() *egress.Policy {
	deny := egress.OwnAddresses(apiHost(api))
	return func() *egress.Policy {
		rules := store.Load().Network.EgressAllow
		if len(allow) > 0 {
			rules = append(slices.Clip(rules), allow...)
		}
		return &egress.Policy{Allow: rules, Deny: deny}
	}
}

// apiHost is the host of the API server's URL, "" when there is none.
func apiHost(api *rest.Config) string {
	if api == nil {
		return ""
	}
	u, err := url.Parse(api.Host)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
