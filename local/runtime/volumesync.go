package runtime

import (
	"bytes"
	"context"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// tokenRefreshAge is the share of a projected token's lifetime after which
// it is requested again, and tokenMaxAge the age at which it is whatever
// its lifetime: the kubelet's token manager rotates at 80% or 24 hours.
const (
	tokenRefreshAge = 0.8
	tokenMaxAge     = 24 * time.Hour
)

// syncVolumes keeps the replica's volumes of API data current until ctx
// ends, as the kubelet does: every VolumeSyncPeriod each one is read again
// and, when its files changed (a ConfigMap or Secret edited, a token due),
// swapped in whole. A mount by subPath keeps the file it bound, as on
// Kubernetes. A read that fails (the ConfigMap deleted) keeps what is on
// disk, and is logged.
func (r *replica) syncVolumes(ctx context.Context) {
	if !r.hasAPIData() {
		return
	}
	tick := time.NewTicker(r.rt.opts.VolumeSyncPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			r.refreshVolumes(ctx)
		}
	}
}

func (r *replica) hasAPIData() bool {
	return slices.ContainsFunc(r.spec.Volumes, func(v corev1.Volume) bool { return apiData(&v) })
}

// refreshVolumes is one pass of syncVolumes, once the volumes are written.
func (r *replica) refreshVolumes(ctx context.Context) {
	r.volumes.mu.Lock()
	defer r.volumes.mu.Unlock()
	if !r.volumes.prepared {
		return
	}
	src := r.volumeSources()
	for i := range r.spec.Volumes {
		v := &r.spec.Volumes[i]
		if !apiData(v) {
			continue
		}
		files, err := volumePayload(ctx, src, r.pod, r.spec, v)
		if err == nil && !samePayload(files, r.volumes.written[v.Name]) {
			dir := filepath.Join(r.volumesDir(), v.Name)
			if err = writeAtomic(dir, files); err == nil {
				err = r.ownVolume(v, dir)
			}
			if err == nil {
				r.volumes.written[v.Name] = files
				r.log.V(1).Info("Volume updated", "volume", v.Name, "files", len(files))
			}
		}
		r.noteRefresh(v.Name, err)
	}
}

// noteRefresh logs a volume's refresh error when it is new, and its
// recovery, so a deleted ConfigMap is one log line, not one a period.
func (r *replica) noteRefresh(volume string, err error) {
	if r.volumes.failing == nil {
		r.volumes.failing = map[string]string{}
	}
	was := r.volumes.failing[volume]
	switch {
	case err != nil && err.Error() != was:
		r.volumes.failing[volume] = err.Error()
		r.log.Info("Volume not updated; the replica keeps its last files", "volume", volume, "error", err.Error())
	case err == nil && was != "":
		delete(r.volumes.failing, volume)
		r.log.Info("Volume updated again", "volume", volume)
	}
}

func samePayload(a, b payload) bool {
	return maps.EqualFunc(a, b, func(x, y volumeFile) bool { return x.mode == y.mode && bytes.Equal(x.data, y.data) })
}

// tokenCache keeps each service-account token a replica's volumes
// project until it is due (tokenDue), so that a resync rewrites a token
// only when the kubelet would rotate it. The zero value is ready to use.
type tokenCache struct {
	mu     sync.Mutex
	now    func() time.Time // time.Now when nil
	tokens map[tokenKey]cachedToken
}

type tokenKey struct {
	audience          string
	expirationSeconds int64
}

type cachedToken struct {
	token  []byte
	issued time.Time
}

// tokenDue says whether a token issued at issued for lifetime must be
// requested again at now.
func tokenDue(issued time.Time, lifetime time.Duration, now time.Time) bool {
	age := now.Sub(issued)
	return age >= time.Duration(float64(lifetime)*tokenRefreshAge) || age >= tokenMaxAge
}

// through is src with its tokens served from the cache.
func (c *tokenCache) through(src volumeSources) volumeSources {
	return cachedTokens{volumeSources: src, cache: c}
}

type cachedTokens struct {
	volumeSources
	cache *tokenCache
}

func (s cachedTokens) token(ctx context.Context, audience string, expirationSeconds int64) ([]byte, error) {
	c := s.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	key := tokenKey{audience, expirationSeconds}
	if t, ok := c.tokens[key]; ok && !tokenDue(t.issued, time.Duration(expirationSeconds)*time.Second, now()) {
		return t.token, nil
	}
	issued := now()
	token, err := s.volumeSources.token(ctx, audience, expirationSeconds)
	if err != nil {
		return nil, err
	}
	if c.tokens == nil {
		c.tokens = map[tokenKey]cachedToken{}
	}
	c.tokens[key] = cachedToken{token: token, issued: issued}
	return token, nil
}
