package dev

import (
	"fmt"
	"net/url"

	"k8s.io/client-go/rest"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/gitsync/egress"
	"github.com/knitops/knit/platform"
)

// gitEgress is knit dev's egress policy for Git fetches: the platform's,
// plus its own Git server at gitURL. knit dev creates a GitRepository on
// loopback for every push, so its server must stay reachable whatever
// config-network says; only its address and port are, not loopback's
// other listeners (etcd, the API server, the webhooks).
func gitEgress(api *rest.Config, store *config.Store, gitURL string) (func() *egress.Policy, error) {
	u, err := url.Parse(gitURL)
	if err != nil {
		return nil, fmt.Errorf("git server URL %q: %w", gitURL, err)
	}
	own, err := egress.ParseRules(u.Host)
	if err != nil {
		return nil, fmt.Errorf("git server URL %q: %w", gitURL, err)
	}
	return platform.EgressPolicy(api, store, own...), nil
}
