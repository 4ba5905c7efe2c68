package route

import (
	"context"
	"strings"
	"time"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/route/certificates"
	"github.com/knitops/knit/controllers/route/resources"
)

// tlsOff says why rt gets no certificate; "" when it should have one.
func tlsOff(rt *servingv1.Route, n *config.Network) string {
	switch {
	case !n.ExternalDomainTLS:
		return "external-domain-tls is not enabled in config-network"
	case rt.Labels[servingv1.VisibilityLabelKey] == "cluster-local":
		return "the route is cluster-local"
	}
	if key := config.ExternalDomainTLSDisabledBy(rt.Annotations); key != "" {
		return "disabled by the annotation " + key
	}
	return ""
}

// certificate sets CertificateProvisioned and, once the Route's hosts
// have a certificate, its https:// URLs (status.url and the tags'). It
// says when to look again: the renewal, or the next attempt after a
// failure. The URLs stay http:// until then, so every URL in status
// answers as printed.
func (r *Reconciler) certificate(ctx context.Context, rt *servingv1.Route, before *servingv1.RouteStatus, cfg *config.Config, private map[string]bool) (time.Duration, error) {
	if why := tlsOff(rt, cfg.Network); why != "" || r.certs == nil {
		if why == "" {
			why = "this installation obtains no certificates"
		}
		if hadCertificate(before) && r.certs != nil {
			if err := r.certs.Release(ctx, rt.Namespace, rt.Name); err != nil {
				return 0, err
			}
		}
		rt.Status.MarkTLSNotEnabled(why)
		return 0, nil
	}
	out, err := r.certs.Ensure(ctx, rt, routeHosts(&rt.Status), cfg.Network.ACME)
	if err != nil {
		return 0, err
	}
	switch out.State {
	case certificates.Ready:
		rt.Status.MarkCertificateReady(out.Secret)
		if err := r.httpsURLs(rt, cfg, private); err != nil {
			return 0, err
		}
	case certificates.Pending:
		rt.Status.MarkCertificateNotReady(out.Reason, out.Message)
	case certificates.Failed:
		rt.Status.MarkCertificateProvisionFailed(out.Reason, out.Message)
	}
	return out.RecheckAfter, nil
}

// hadCertificate says whether a Route's status shows it wanted one, so
// turning TLS off deletes the certificate once and not at every
// reconcile.
func hadCertificate(status *servingv1.RouteStatus) bool {
	c := status.GetCondition(servingv1.RouteConditionCertificateProvisioned)
	return c != nil && c.Reason != servingv1.ReasonTLSNotEnabled
}

// routeHosts are the public hosts of a Route's URL and its tags' URLs:
// in-cluster ones (a private tag's) get no certificate.
func routeHosts(status *servingv1.RouteStatus) []string {
	var hosts []string
	for _, u := range append([]string{status.URL}, tagURLs(status.Traffic)...) {
		if h := hostOf(u); h != "" && !strings.HasSuffix(h, "."+resources.ClusterLocalDomain) {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

func tagURLs(traffic []servingv1.TrafficTarget) []string {
	var urls []string
	for _, t := range traffic {
		if t.URL != "" {
			urls = append(urls, t.URL)
		}
	}
	return urls
}

// hostOf is the host of "scheme://host[:port]".
func hostOf(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return ""
	}
	host, _, _ := strings.Cut(rest, "/")
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i]
	}
	return strings.ToLower(host)
}

// httpsURLs recomputes rt's URLs as https:// on the HTTPS port.
func (r *Reconciler) httpsURLs(rt *servingv1.Route, cfg *config.Config, private map[string]bool) error {
	network := *cfg.Network
	network.DefaultExternalScheme = "https"
	secure := *cfg
	secure.Network = &network
	url, address, traffic, err := resources.URLs(rt, rt.Status.Traffic, &secure, r.urlPortTLS, private)
	if err != nil {
		return err
	}
	rt.Status.URL, rt.Status.Address, rt.Status.Traffic = url, &duckv1.Addressable{URL: address}, traffic
	return nil
}
