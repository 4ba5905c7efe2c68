package runtime

import (
	"net/netip"
	"testing"

	"github.com/knitops/knit/internal/endpointslices"
)

// The ingress, activator and autoscaler dial only addresses
// endpointslices trusts, and refuse link-local ones but knit dev's
// replica networks: the pool isolated replicas draw from must be that
// range, or no request ever reaches them.
func TestReplicaPoolIsTrusted(t *testing.T) {
	pool := netip.PrefixFrom(netip.AddrFrom4([4]byte(poolBase)), 18)
	if pool != endpointslices.ReplicaNetworks {
		t.Errorf("replica pool %s, endpointslices trusts %s", pool, endpointslices.ReplicaNetworks)
	}
}
