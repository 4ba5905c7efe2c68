package ingress

import (
	"sync"
	"sync/atomic"

	"github.com/knitops/knit/dataplane/h1proxy"
)

// maxIdlePerEndpoint is how many idle connections the fast path keeps to
// one endpoint, as forward.NewTransport's pool keeps per host.
const maxIdlePerEndpoint = 100

// upstreams are the fast path's connection pools, one per endpoint
// address. The map is read on every request without a lock and copied on
// the rare write (an endpoint seen for the first time); each table drops
// the pools of addresses it no longer lists, so pods that come and go do
// not leave pools behind.
type upstreams struct {
	pools atomic.Pointer[map[string]*h1proxy.Pool]
	mu    sync.Mutex // serializes writers
}

// pool is addr's pool, made on first use.
func (u *upstreams) pool(addr string) *h1proxy.Pool {
	if m := u.pools.Load(); m != nil {
		if p := (*m)[addr]; p != nil {
			return p
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	old := u.load()
	if p := old[addr]; p != nil {
		return p
	}
	m := make(map[string]*h1proxy.Pool, len(old)+1)
	for k, p := range old {
		m[k] = p
	}
	p := h1proxy.NewPool(addr, maxIdlePerEndpoint)
	m[addr] = p
	u.pools.Store(&m)
	return p
}

func (u *upstreams) load() map[string]*h1proxy.Pool {
	if m := u.pools.Load(); m != nil {
		return *m
	}
	return nil
}

// keepOnly drops the pools of addresses t does not list, closing their
// idle connections. A request still under way to such an address (routed
// before the table changed) finishes; its connection goes back to the
// dropped pool, whose timer closes it.
func (u *upstreams) keepOnly(t *Table) {
	u.mu.Lock()
	defer u.mu.Unlock()
	old := u.load()
	listed := map[string]bool{}
	for _, b := range t.revisions {
		for _, a := range b.addrs {
			listed[a] = true
		}
	}
	m := make(map[string]*h1proxy.Pool, len(old))
	for addr, p := range old {
		if listed[addr] {
			m[addr] = p
		} else {
			p.CloseIdle(false)
		}
	}
	u.pools.Store(&m)
}

// closeIdle closes every pool's idle connections.
func (u *upstreams) closeIdle() {
	for _, p := range u.load() {
		p.CloseIdle(false)
	}
}
