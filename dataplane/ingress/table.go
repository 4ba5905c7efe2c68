package ingress

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	discoveryv1 "k8s.io/api/discovery/v1"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/internal/endpointslices"
	"github.com/knitops/knit/internal/hopauth"
)

// Table is one immutable snapshot of what the router serves.
type Table struct {
	hosts map[string]*entry
	// private are the in-cluster names of every Route and tag
	// (<route>.<namespace>.svc.cluster.local, .svc, and
	// <route>.<namespace>) and the hosts of cluster-local Routes: served
	// only on the internal listener (Router.Internal).
	private   map[string]*entry
	revisions map[string]*backend // namespace/name → endpoints, for retries
	// certs are the certificates HTTPS handshakes pick from (certs.go).
	certs certIndex
	// challenges are the ACME HTTP-01 responses by host and token.
	challenges map[string]map[string]string
	// routes are the resourceVersions of the Routes the table was built
	// from, by namespace/name (Programmed).
	routes map[string]string
}

// entry is one host: the Revisions behind it and the pick cycle.
type entry struct {
	route     string // namespace/name, for errors and logs
	namespace string // the Route's, whose certificates serve this host
	// redirect sends plain-HTTP requests to HTTPS (http-protocol
	// Redirected).
	redirect bool
	targets  []*target
	schedule []uint16
	next     atomic.Uint64
	// tags are a Route's tagged targets by tag, on the entry of its main
	// host, for requests naming one in TagHeader (Table.route). nil unless
	// tag-header routing is on and the Route has tags: the request path
	// then reads no header.
	tags map[string]*entry
}

// target is a backend as one entry reaches it: requests the entry routes
// there carry header: value (none when header is ""). The value slice is
// set as is on every such request, never appended to in place (its
// capacity is its length, so an append copies).
type target struct {
	*backend
	header string
	value  []string
}

// backend is one Revision's public endpoints ("host:port").
type backend struct {
	revision        string // namespace/name
	namespace, name string
	addrs           []string
	next            atomic.Uint64
	// keys sign the route to this Revision (sign.go); sig caches it.
	keys *hopauth.Keyring
	sig  atomic.Pointer[routeSig]
}

// The headers of Knative's tag-header-based-routing, its names.
const (
	// TagHeader on a request to a Route's main host names the tag whose
	// target serves it; the ingress sets it on requests through a tag's
	// own host, so the app and the queue-proxy see the tag whichever way
	// the request named it.
	TagHeader = "Knative-Serving-Tag"
	// DefaultRouteHeader is "true" on requests the Route's split served.
	// Beside a TagHeader it says the tag named none of the Route's
	// targets (Knative's queue-proxy counts such requests as UNDEFINED).
	DefaultRouteHeader = "Knative-Serving-Default-Route"
)

// Options are what the table takes from config-features. The zero
// Options are Knative's defaults.
type Options struct {
	// TagHeaderRouting is tag-header-based-routing: a request to a
	// Route's main host naming one of its tags in TagHeader goes to that
	// tag's Revision, whatever its percent, and the ingress sets
	// DefaultRouteHeader and TagHeader on the requests it routes by split
	// and by tag host.
	TagHeaderRouting bool
	// Network is config-network, for http-protocol; nil is Knative's
	// defaults.
	Network *config.Network
}

// OptionsFrom reads Options from config-features (Network is set apart,
// from config-network). Knative routes by the
// tag header only when its flag is Enabled; Allowed, which elsewhere lets
// a Service opt in by annotation, leaves it off (no Service can opt in to
// a Route's ingress).
func OptionsFrom(f *config.Features) Options {
	return Options{TagHeaderRouting: f.TagHeaderBasedRouting == config.FeatureEnabled}
}

// defaultRoute is DefaultRouteHeader's one value, shared by every request.
var defaultRoute = []string{"true"}

// Build computes the table from Routes (their resolved status.traffic and
// URLs) and the public EndpointSlices, which the SKS points at replicas or
// activators. Slices endpointslices.Check refuses (not written by the SKS
// or Kubernetes, or naming hosts rather than IP addresses) stay off the
// table: the ingress proxies only to addresses knit itself published.
//
// A public Route's hosts are served on every listener; a cluster-local
// Route's, and every Route's in-cluster names (privateHosts), on the
// internal listener only, as Knative's placeholder Services give every
// Route an address inside the cluster.
//
// Each tagged target gets one entry, routed to whole, which its own host
// and (with TagHeaderRouting) the main host's tag map share: Knative's
// ingress matches the tag header on the main host only, and routes it to
// the tag's target at 100% whatever its percent in the split.
func (o Options) Build(routes []servingv1.Route, slices []discoveryv1.EndpointSlice) *Table {
	eps := endpointsByService(slices)
	t := &Table{hosts: map[string]*entry{}, private: map[string]*entry{}, revisions: map[string]*backend{}, routes: make(map[string]string, len(routes))}
	for i := range routes {
		rt := &routes[i]
		t.routes[rt.Namespace+"/"+rt.Name] = rt.ResourceVersion
		if len(rt.Status.Traffic) == 0 {
			continue
		}
		public := t.hosts
		if rt.Labels[servingv1.VisibilityLabelKey] == "cluster-local" {
			public = t.private
		}
		main := &entry{route: rt.Namespace + "/" + rt.Name, namespace: rt.Namespace, redirect: o.redirects(rt.Annotations)}
		var percents []int64
		for _, tt := range rt.Status.Traffic {
			b := t.backend(rt.Namespace+"/"+tt.RevisionName, eps)
			if tt.Percent != nil && *tt.Percent > 0 {
				main.targets = append(main.targets, o.splitTarget(b))
				percents = append(percents, *tt.Percent)
			}
			if tt.Tag == "" {
				continue
			}
			e := &entry{route: main.route, namespace: main.namespace, redirect: main.redirect, targets: []*target{o.tagTarget(b, tt.Tag)}, schedule: []uint16{0}}
			if host := hostOf(tt.URL); strings.HasSuffix(host, "."+ClusterDomain) {
				t.private[host] = e // a tag made private on its own
			} else if host != "" {
				public[host] = e
			}
			for _, host := range o.privateHosts(o.tagName(rt.Name, tt.Tag), rt.Namespace) {
				t.private[host] = e
			}
			if o.TagHeaderRouting {
				if main.tags == nil {
					main.tags = map[string]*entry{}
				}
				main.tags[tt.Tag] = e
			}
		}
		if len(main.targets) == 0 {
			continue
		}
		main.schedule = buildSchedule(percents)
		if host := hostOf(rt.Status.URL); host != "" {
			public[host] = main
		}
		for _, host := range o.privateHosts(rt.Name, rt.Namespace) {
			t.private[host] = main
		}
	}
	return t
}

// privateHosts are the names a Kubernetes Service called name in
// namespace answers to inside the cluster.
func (o Options) privateHosts(name, namespace string) []string {
	if name == "" {
		return nil
	}
	return []string{name + "." + namespace + "." + ClusterDomain, name + "." + namespace + ".svc", name + "." + namespace}
}

// ClusterDomain is the in-cluster DNS suffix of Services, Kubernetes'
// default.
const ClusterDomain = "svc.cluster.local"

// tagName is the name of a tag's own Kubernetes Service, by
// config-network's tag-template ("" when it cannot be made).
func (o Options) tagName(route, tag string) string {
	n := o.Network
	if n == nil {
		return tag + "-" + route
	}
	name, err := n.TagName(route, tag)
	if err != nil {
		return ""
	}
	return name
}

// redirects says whether the hosts of a Route or DomainMapping with
// these annotations send plain HTTP to HTTPS. An annotation admission
// would have refused counts as Enabled: serving is the safer way to be
// wrong.
func (o Options) redirects(annotations map[string]string) bool {
	n := o.Network
	if n == nil {
		n = &config.Network{HTTPProtocol: config.HTTPEnabled}
	}
	p, err := n.RouteHTTPProtocol(annotations)
	return err == nil && p == config.HTTPRedirected
}

// splitTarget is b as a Route's split reaches it.
func (o Options) splitTarget(b *backend) *target {
	if !o.TagHeaderRouting {
		return &target{backend: b}
	}
	return &target{backend: b, header: DefaultRouteHeader, value: defaultRoute}
}

// tagTarget is b as its tag reaches it, by tag host or tag header. A
// request routed by the header already carries TagHeader: tag, the one
// value that matched, so setting it again changes nothing.
func (o Options) tagTarget(b *backend, tag string) *target {
	if !o.TagHeaderRouting || tag == "" {
		return &target{backend: b}
	}
	return &target{backend: b, header: TagHeader, value: []string{tag}}
}

// inherit carries the pick positions of old over to t for every host whose
// schedule and revisions are unchanged.
func (t *Table) inherit(old *Table) {
	if old == nil {
		return
	}
	for host, e := range t.hosts {
		if o, ok := old.hosts[host]; ok && e.sameSplit(o) {
			e.next.Store(o.next.Load())
		}
	}
}

func (e *entry) sameSplit(o *entry) bool {
	if !slices.Equal(e.schedule, o.schedule) || len(e.targets) != len(o.targets) {
		return false
	}
	for i := range e.targets {
		if e.targets[i].revision != o.targets[i].revision {
			return false
		}
	}
	return true
}

// backend returns the one shared backend of a Revision, so every host that
// reaches it round-robins over the same counter.
func (t *Table) backend(revision string, eps map[string][]string) *backend {
	if b, ok := t.revisions[revision]; ok {
		return b
	}
	ns, name, _ := strings.Cut(revision, "/")
	b := &backend{revision: revision, namespace: ns, name: name, addrs: eps[revision]}
	t.revisions[revision] = b
	return b
}

// endpointsByService lists ready "ip:port" per namespace/service.
func endpointsByService(slices []discoveryv1.EndpointSlice) map[string][]string {
	out := map[string][]string{}
	for i := range slices {
		s := &slices[i]
		svc := s.Labels[discoveryv1.LabelServiceName]
		if svc == "" || endpointslices.Check(s) != nil {
			continue
		}
		port := httpPort(s.Ports)
		if port == 0 {
			continue
		}
		key := s.Namespace + "/" + svc
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				out[key] = append(out[key], net.JoinHostPort(a, strconv.Itoa(int(port))))
			}
		}
	}
	return out
}

func httpPort(ports []discoveryv1.EndpointPort) int32 {
	for _, p := range ports {
		if p.Port != nil && (p.Name == nil || *p.Name == "http" || *p.Name == "") {
			return *p.Port
		}
	}
	return 0
}

// hostOf is the lower-cased host of a URL without its port.
func hostOf(u string) string {
	if u == "" {
		return ""
	}
	parsed, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return strings.ToLower(parsed.Hostname())
}

// lookup finds the entry for a request's Host header. Only a Host with a
// port (a colon after any IPv6 bracket) is split: SplitHostPort refuses
// one without, which leaves it as is, but allocates its error, and most
// clients omit the default port.
func (t *Table) lookup(hostport string) *entry { return t.lookupIn(t.hosts, hostport) }

// lookupIn is lookup in one of the table's host maps.
func (t *Table) lookupIn(hosts map[string]*entry, hostport string) *entry {
	host := hostport
	if strings.LastIndexByte(hostport, ':') > strings.LastIndexByte(hostport, ']') {
		if h, _, err := net.SplitHostPort(hostport); err == nil {
			host = h
		}
	}
	return hosts[strings.ToLower(host)]
}

// routeInternal is route on the internal listener, where a Route's
// in-cluster names and cluster-local Routes are served too.
func (t *Table) routeInternal(req *http.Request) *entry {
	if e := t.lookupIn(t.private, req.Host); e != nil {
		return t.tagged(e, req)
	}
	return t.route(req)
}

// route finds the entry a request takes: its host's, or, on a Route's
// main host with tag-header routing on, the tagged target TagHeader
// names. A tag the Route does not have, or several TagHeader values, take
// the split, as in Knative: its ingress matches one exact value per tag
// and sends the rest down the default path.
func (t *Table) route(req *http.Request) *entry {
	return t.tagged(t.lookup(req.Host), req)
}

// tagged is the entry of the tag TagHeader names on e, else e.
func (t *Table) tagged(e *entry, req *http.Request) *entry {
	if e == nil || e.tags == nil {
		return e
	}
	if v := req.Header[TagHeader]; len(v) == 1 {
		if tagged := e.tags[v[0]]; tagged != nil {
			return tagged
		}
	}
	return e
}

// pick chooses the target for the next request of this host.
func (e *entry) pick() *target {
	if len(e.schedule) == 0 {
		return nil
	}
	n := e.next.Add(1) - 1
	return e.targets[e.schedule[n%uint64(len(e.schedule))]]
}

// addr chooses the next endpoint of a backend, round robin; "" if none.
func (b *backend) addr() string {
	if len(b.addrs) == 0 {
		return ""
	}
	n := b.next.Add(1) - 1
	return b.addrs[n%uint64(len(b.addrs))]
}
