// Command coredns is CoreDNS with only the plugins a cluster DNS needs (the
// kubernetes plugin answers for Services and Pods). make cluster builds it
// from the Go module proxy, packs it into an image and runs it as kube-dns:
// the test cluster has no registry to pull CoreDNS from.
package main

import (
	_ "github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() { coremain.Run() }
