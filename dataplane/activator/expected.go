package activator

import (
	"slices"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	"github.com/knitops/knit/internal/names"
)

// expectedFor bounds how long endpoints announced by ExpectSlices count
// without the slices catching up: they are written within milliseconds,
// and an announcement whose write never lands must not be probed for
// ever.
const expectedFor = 10 * time.Second

// expected are the replicas announced for Revisions ahead of their
// slices, per private Service.
type expected struct {
	mu    sync.Mutex
	bySvc map[types.NamespacedName]announced
}

// announced is one private Service's announced endpoints.
type announced struct {
	rev   types.NamespacedName
	addrs []string // ready or not, not terminating
	until time.Time
}

// ExpectSlices is told, by a runtime in the same process (knit dev's), the
// EndpointSlices it is about to write for a Service: all of them, none
// when the Service is gone. The endpoints of a Revision's private Service
// become candidates at once, probed like the ones the slices list as not
// ready, instead of after the write has come back through the watch — on
// a loaded machine that round trip is tens of milliseconds of every cold
// start. Nothing takes traffic before its queue-proxy answers the probe,
// and the slices themselves still decide when an endpoint is gone.
func (a *Activator) ExpectSlices(service types.NamespacedName, labels map[string]string, items []discoveryv1.EndpointSlice) {
	rev, ok := privateServiceRevision(service, labels)
	var addrs []string
	if ok {
		eps := endpointAddresses(items)
		addrs = append(slices.Clone(eps.ready), eps.notReady...)
	}
	a.expected.mu.Lock()
	old, had := a.expected.bySvc[service]
	if len(addrs) == 0 {
		delete(a.expected.bySvc, service)
	} else {
		if a.expected.bySvc == nil {
			a.expected.bySvc = map[types.NamespacedName]announced{}
		}
		a.expected.bySvc[service] = announced{rev: rev, addrs: addrs, until: time.Now().Add(expectedFor)}
	}
	a.expected.mu.Unlock()
	if had && old.rev != rev {
		a.refresh(old.rev)
	}
	if ok {
		a.refresh(rev)
	}
}

// privateServiceRevision is the Revision whose private Service service
// is, by the labels the ServerlessService gives it and its name.
func privateServiceRevision(service types.NamespacedName, labels map[string]string) (types.NamespacedName, bool) {
	sks := labels[networkingv1alpha1.ServerlessServiceLabelKey]
	if sks == "" || labels[networkingv1alpha1.ServiceTypeLabelKey] != networkingv1alpha1.ServiceTypePrivate ||
		service.Name != names.PrivateService(sks) {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: service.Namespace, Name: sks}, true
}

// announcedFor is every address announced for rev and still standing
// at now; expired announcements are dropped.
func (e *expected) announcedFor(rev types.NamespacedName, now time.Time) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for svc, an := range e.bySvc {
		switch {
		case !now.Before(an.until):
			delete(e.bySvc, svc)
		case an.rev == rev:
			out = append(out, an.addrs...)
		}
	}
	return out
}

// withAnnounced adds the announced addresses the slices do not list yet
// to eps as not ready: probed before they take traffic.
func (eps endpointSet) withAnnounced(addrs []string) endpointSet {
	if len(addrs) == 0 {
		return eps
	}
	out := endpointSet{ready: eps.ready, notReady: slices.Clone(eps.notReady)}
	for _, addr := range addrs {
		if !slices.Contains(eps.ready, addr) && !slices.Contains(out.notReady, addr) {
			out.notReady = append(out.notReady, addr)
		}
	}
	slices.Sort(out.notReady)
	return out
}

// refresh applies rev's listed endpoints and its announced ones again.
func (a *Activator) refresh(rev types.NamespacedName) {
	a.mu.RLock()
	r, ok := a.revs[rev]
	a.mu.RUnlock()
	if ok {
		r.setEndpoints(nil, func() []string { return a.expected.announcedFor(rev, time.Now()) })
	}
}
