package buildkit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"path/filepath"
)

// DefaultStepSubnet is the addresses of RUN steps' network when the
// operator allows them hosts: link-local, so nothing routes it, and
// clear of the isolated replicas' 169.254.64.0/18 and of cloud metadata's
// 169.254.169.254. No address of this machine is in it (the gateway is in
// a network namespace of its own), so it cannot shadow a network this
// machine is on whatever it is; only steps and the proxy see it.
var DefaultStepSubnet = netip.MustParsePrefix("169.254.62.0/24")

// proxyPort is where the proxy listens on the gateway: squid's port, a
// constant because nothing else listens in the proxy's namespace.
const proxyPort = 3128

// stepNetworkName names the CNI network of RUN steps (and host-local's
// leases under it).
const stepNetworkName = "knit-build-steps"

// stepLinks are the names of the bridge RUN steps' interfaces are ports
// of and of the host's end of the proxy's veth: derived from dir, so two
// knit devs on one machine, each with its state directory, never share
// them, and a killed knit dev's are found again by the next in its place.
func stepLinks(dir string) (bridge, veth string) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	sum := sha256.Sum256([]byte(dir))
	id := hex.EncodeToString(sum[:4])
	return "knb" + id, "knp" + id // 11 bytes: interface names hold 15
}

// checkStepSubnet says why subnet cannot be the steps' network: IPv4
// (host-local and the proxy's URL are simplest so), and room for the
// gateway and BuildKit's pool of namespaces.
func checkStepSubnet(subnet netip.Prefix) error {
	if !subnet.IsValid() || !subnet.Addr().Is4() || subnet.Bits() < 16 || subnet.Bits() > 28 {
		return fmt.Errorf("RUN steps' subnet %s: want an IPv4 range from /16 to /28", subnet)
	}
	if subnet.Masked() != subnet {
		return fmt.Errorf("RUN steps' subnet %s: write it as %s", subnet, subnet.Masked())
	}
	return nil
}

// stepGateway is the subnet's first address: the proxy's.
func stepGateway(subnet netip.Prefix) netip.Addr {
	return subnet.Masked().Addr().Next()
}

// stepConflist is the CNI configuration of RUN steps' network: each step
// an interface on bridge, an address from host-local in subnet, and no
// route but the subnet's own, so without CAP_NET_ADMIN (which BuildKit
// does not grant steps) all a step reaches is the subnet: the proxy.
// isGateway and ipMasq are off: this machine holds no address on the
// bridge and forwards nothing from it. Loopback is not in the list:
// BuildKit's CNI provider brings up each step's lo by itself.
func stepConflist(bridge string, subnet netip.Prefix, ipamDir string) ([]byte, error) {
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       stepNetworkName,
		"plugins": []any{map[string]any{
			"type":        "bridge",
			"bridge":      bridge,
			"isGateway":   false,
			"ipMasq":      false,
			"hairpinMode": false,
			"ipam": map[string]any{
				"type":    "host-local",
				"dataDir": ipamDir,
				"ranges":  [][]map[string]string{{{"subnet": subnet.String(), "gateway": stepGateway(subnet).String()}}},
			},
		}},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("RUN steps' CNI configuration: %w", err)
	}
	return append(b, '\n'), nil
}
