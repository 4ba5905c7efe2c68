package egress

import (
	"context"
	"net"
	"net/netip"
	"os"
	"time"
)

// OwnAddresses are the control plane's own addresses, for Policy.Deny: the
// addresses of this machine's (or pod's) interfaces, where knit's webhooks,
// metrics and, in knit dev, the API server and etcd listen; the API
// server's (apiHost, the host of its URL, and the in-cluster Service
// address Kubernetes gives every pod). Loopback ones are refused anyway.
func OwnAddresses(apiHost string) []netip.Prefix {
	var own []netip.Prefix
	add := func(a netip.Addr) {
		if a.IsValid() && !a.IsLoopback() {
			a = a.Unmap()
			own = append(own, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				ip, _ := netip.AddrFromSlice(n.IP)
				add(ip)
			}
		}
	}
	for _, h := range []string{apiHost, os.Getenv("KUBERNETES_SERVICE_HOST")} {
		if h == "" {
			continue
		}
		if a, err := netip.ParseAddr(h); err == nil {
			add(a)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", h)
		cancel()
		if err == nil {
			for _, ip := range ips {
				add(ip)
			}
		}
	}
	return own
}
