package resources

import (
	"fmt"
	"strconv"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

// ClusterLocalDomain is the in-cluster suffix, Kubernetes' default.
const ClusterLocalDomain = "svc.cluster.local"

// URLs fills the route's own URL, its in-cluster address and every tagged
// target's URL. port, when not 0 or the scheme's own (80, 443), is shown
// in URLs so a local ingress on :8080 gives URLs that curl reaches as
// printed. A tag in privateTags (its own Service labelled cluster-local)
// gets an in-cluster URL, as the whole Route does when it is
// cluster-local.
func URLs(rt *servingv1.Route, traffic []servingv1.TrafficTarget, cfg *config.Config, port int, privateTags map[string]bool) (url, address string, out []servingv1.TrafficTarget, err error) {
	routeLocal := rt.Labels[servingv1.VisibilityLabelKey] == "cluster-local"
	mk := func(tag string) (string, error) {
		clusterLocal := routeLocal || privateTags[tag]
		domain := cfg.Domain.LookupDomain(rt.Labels)
		if clusterLocal {
			domain = ClusterLocalDomain
		}
		host, err := cfg.Network.Host(rt.Name, rt.Namespace, domain, tag)
		if err != nil {
			return "", err
		}
		u := cfg.Network.DefaultExternalScheme + "://" + host
		if clusterLocal {
			u = "http://" + host
		} else if port != 0 && !(port == 80 && cfg.Network.DefaultExternalScheme == "http") && !(port == 443 && cfg.Network.DefaultExternalScheme == "https") {
			u += ":" + strconv.Itoa(port)
		}
		return u, nil
	}
	if url, err = mk(""); err != nil {
		return "", "", nil, fmt.Errorf("route %s URL: %w", rt.Name, err)
	}
	address = fmt.Sprintf("http://%s.%s.%s", rt.Name, rt.Namespace, ClusterLocalDomain)
	out = make([]servingv1.TrafficTarget, len(traffic))
	for i, t := range traffic {
		out[i] = t
		if t.Tag == "" {
			continue
		}
		if out[i].URL, err = mk(t.Tag); err != nil {
			return "", "", nil, fmt.Errorf("route %s tag %s URL: %w", rt.Name, t.Tag, err)
		}
	}
	return url, address, out, nil
}
