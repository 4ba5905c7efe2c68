// Package resolve turns the tags a Revision's containers name into the
// digests they point at when the Revision is created, as Knative does, so
// every replica of the Revision (and every scale from zero, on any node)
// runs the same image however often the tag is pushed again. Registries
// are asked in the background, one goroutine per Revision and a few at a
// time, so a slow registry never holds the reconciler: Resolve answers at
// once, and the Revision is reconciled again when its answer is ready.
package resolve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/pullsecrets"
)

// parallel bounds the Revisions resolved at once: each holds a connection
// or two to a registry for at most its timeout.
const parallel = 4

// A Revision that failed is asked about again after firstRetry, doubling
// up to maxRetry: a missing image is often pushed minutes later, and a
// registry must not be asked a hundred times a second meanwhile.
const (
	firstRetry = time.Second
	maxRetry   = 5 * time.Minute
)

// Request is one Revision's containers to resolve.
type Request struct {
	// Revision is woken when the answer is ready.
	Revision types.NamespacedName
	// UID tells a Revision from a later one of the same name.
	UID types.UID
	// Containers are resolved in order, with the credentials of
	// ServiceAccount and ImagePullSecrets.
	Containers         []corev1.Container
	ServiceAccountName string
	ImagePullSecrets   []corev1.LocalObjectReference
	// Skip says a registry's tags run as written (config-deployment's
	// registries-skipping-tag-resolving).
	Skip func(registry string) bool
	// Timeout bounds the whole Revision's resolution.
	Timeout time.Duration
}

// Resolver resolves Revisions' tags in the background.
type Resolver struct {
	// reader reads ServiceAccounts and pull Secrets; uncached, so the
	// controller keeps no copy of every Secret.
	reader    client.Reader
	transport http.RoundTripper
	wake      func(types.NamespacedName)
	slots     chan struct{}

	mu   sync.Mutex
	jobs map[types.NamespacedName]*job
}

type job struct {
	uid      types.UID
	done     bool
	statuses []servingv1.ContainerStatus
	err      *Error
	// failures counts the failed attempts in a row; the last one's err
	// is the answer until retryAt.
	failures int
	retryAt  time.Time
}

// New is a Resolver whose registry requests go through transport (nil:
// http.DefaultTransport) and which calls wake with a Revision whose
// answer is ready.
func New(reader client.Reader, transport http.RoundTripper, wake func(types.NamespacedName)) *Resolver {
	if transport == nil {
		transport = http.DefaultTransport
	}
	return &Resolver{reader: reader, transport: transport, wake: wake,
		slots: make(chan struct{}, parallel), jobs: map[types.NamespacedName]*job{}}
}

// Resolve returns the digest of each container of req, in its order,
// once they are known, and forgets them: the caller records them. Until
// then it returns nil, nil and the work goes on in the background. An
// error is the first container that could not be resolved, as an
// *Error whose RetryAfter says when a call will try again; calls before
// then get the same error.
func (r *Resolver) Resolve(req Request) ([]servingv1.ContainerStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.jobs[req.Revision]
	switch {
	case !ok || j.uid != req.UID:
		// A Revision deleted and made again under its name starts over.
		r.start(req, &job{uid: req.UID})
		return nil, nil
	case !j.done:
		return nil, nil
	case j.err == nil:
		delete(r.jobs, req.Revision)
		return j.statuses, nil
	}
	if wait := time.Until(j.retryAt); wait > 0 {
		e := *j.err
		e.RetryAfter = wait
		return nil, &e
	}
	r.start(req, &job{uid: req.UID, failures: j.failures})
	return nil, nil
}

// start runs j for req in the background; r.mu is held.
func (r *Resolver) start(req Request, j *job) {
	r.jobs[req.Revision] = j
	go r.run(req)
}

// retryDelay is how long a Revision that failed n times in a row waits.
func retryDelay(n int) time.Duration {
	d := firstRetry
	for i := 1; i < n && d < maxRetry; i++ {
		d *= 2
	}
	return min(d, maxRetry)
}

// Forget drops what is known of a Revision that is gone; a resolution
// still running finishes unheard.
func (r *Resolver) Forget(rev types.NamespacedName) {
	r.mu.Lock()
	delete(r.jobs, rev)
	r.mu.Unlock()
}

func (r *Resolver) run(req Request) {
	r.slots <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), req.Timeout)
	statuses, err := r.resolveAll(ctx, req)
	cancel()
	<-r.slots
	r.mu.Lock()
	j, ok := r.jobs[req.Revision]
	if ok = ok && j.uid == req.UID; ok {
		j.done, j.statuses, j.err = true, statuses, err
		if err != nil {
			j.failures++
			j.err.RetryAfter = retryDelay(j.failures)
			j.retryAt = time.Now().Add(j.err.RetryAfter)
		}
	}
	r.mu.Unlock()
	if ok {
		r.wake(req.Revision)
	}
}

func (r *Resolver) resolveAll(ctx context.Context, req Request) ([]servingv1.ContainerStatus, *Error) {
	var kc authn.Keychain
	out := make([]servingv1.ContainerStatus, 0, len(req.Containers))
	for _, c := range req.Containers {
		ref, err := reference(c.Image, req.Skip)
		if err != nil {
			return nil, &Error{Image: c.Image, Err: err}
		}
		digest := ""
		switch ref := ref.(type) {
		case name.Digest:
			digest = c.Image
		case name.Tag:
			if kc == nil {
				if kc, err = pullsecrets.Keychain(ctx, r.reader, req.Revision.Namespace, req.ServiceAccountName, req.ImagePullSecrets); err != nil {
					return nil, &Error{Image: c.Image, Err: err}
				}
			}
			if digest, err = r.digest(ctx, ref, kc); err != nil {
				return nil, &Error{Image: c.Image, Err: err}
			}
		}
		out = append(out, servingv1.ContainerStatus{Name: c.Name, ImageDigest: digest})
	}
	return out, nil
}

// reference is the image's name to resolve: a name.Digest (already
// pinned), a name.Tag, or nil for an image no registry serves — one knit
// builds (ko://, knit://) or one of a registry skip names.
func reference(image string, skip func(string) bool) (name.Reference, error) {
	if strings.Contains(image, "://") {
		return nil, nil
	}
	ref, err := name.ParseReference(image)
	if err != nil {
		return nil, err
	}
	if tag, ok := ref.(name.Tag); ok && skip != nil && skip(tag.RegistryStr()) {
		return nil, nil
	}
	return ref, nil
}

// digest asks the registry what tag points at: the digest of its
// manifest or image index, the one the kubelet then pulls (and picks its
// platform's manifest from). A registry that refuses HEAD on manifests
// is asked with GET.
func (r *Resolver) digest(ctx context.Context, tag name.Tag, kc authn.Keychain) (string, error) {
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(kc), remote.WithTransport(r.transport)}
	desc, err := remote.Head(tag, opts...)
	if err != nil {
		full, getErr := remote.Get(tag, opts...)
		if getErr != nil {
			return "", getErr
		}
		desc = &full.Descriptor
	}
	return tag.Context().Name() + "@" + desc.Digest.String(), nil
}

// Error is a container whose image could not be resolved.
type Error struct {
	Image string
	Err   error
	// RetryAfter is when the Revision's resolution is tried again.
	RetryAfter time.Duration
}

// Error reads as Knative's ContainerMissing message.
func (e *Error) Error() string {
	return fmt.Sprintf("Unable to fetch image %q: %v", e.Image, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// AsError is err's *Error, nil when err is no failure to resolve an
// image.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
