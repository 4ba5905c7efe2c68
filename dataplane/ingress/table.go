package ingress

import (
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	discoveryv1 "k8s.io/api/discovery/v1"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/endpointslices"
	"github.com/knitops/knit/internal/hopauth"
)

// Table is one immutable snapshot of what the router serves.
type Table struct {
	hosts     map[string]*entry
	revisions map[string]*backend // namespace/name → endpoints, for retries
}

// entry is one host: the Revisions behind it and the pick cycle.
type entry struct {
	route    string // namespace/name, for errors and logs
	backends []*backend
	schedule []uint16
	next     atomic.Uint64
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

// Build computes the table from Routes (their resolved status.traffic and
// URLs) and the public EndpointSlices, which the SKS points at replicas or
// activators. Routes that are cluster-local stay off the table, and so do
// slices endpointslices.Check refuses (not written by the SKS or
// Kubernetes, or naming hosts rather than IP addresses): the ingress
// proxies only to addresses knit itself published.
func Build(routes []servingv1.Route, slices []discoveryv1.EndpointSlice) *Table {
	eps := endpointsByService(slices)
	t := &Table{hosts: map[string]*entry{}, revisions: map[string]*backend{}}
	for i := range routes {
		rt := &routes[i]
		if rt.Labels[servingv1.VisibilityLabelKey] == "cluster-local" || len(rt.Status.Traffic) == 0 {
			continue
		}
		key := rt.Namespace + "/" + rt.Name
		var backends []*backend
		var percents []int64
		for _, tt := range rt.Status.Traffic {
			b := t.backend(rt.Namespace+"/"+tt.RevisionName, eps)
			if tt.Percent != nil && *tt.Percent > 0 {
				backends = append(backends, b)
				percents = append(percents, *tt.Percent)
			}
			if host := hostOf(tt.URL); host != "" {
				t.hosts[host] = &entry{route: key, backends: []*backend{b}, schedule: []uint16{0}}
			}
		}
		if host := hostOf(rt.Status.URL); host != "" && len(backends) > 0 {
			t.hosts[host] = &entry{route: key, backends: backends, schedule: buildSchedule(percents)}
		}
	}
	return t
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
	if !slices.Equal(e.schedule, o.schedule) || len(e.backends) != len(o.backends) {
		return false
	}
	for i := range e.backends {
		if e.backends[i].revision != o.backends[i].revision {
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

// lookup finds the entry for a request's Host header.
func (t *Table) lookup(hostport string) *entry {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return t.hosts[strings.ToLower(host)]
}

// pick chooses the backend for the next request of this host.
func (e *entry) pick() *backend {
	if len(e.schedule) == 0 {
		return nil
	}
	n := e.next.Add(1) - 1
	return e.backends[e.schedule[n%uint64(len(e.schedule))]]
}

// addr chooses the next endpoint of a backend, round robin; "" if none.
func (b *backend) addr() string {
	if len(b.addrs) == 0 {
		return ""
	}
	n := b.next.Add(1) - 1
	return b.addrs[n%uint64(len(b.addrs))]
}
