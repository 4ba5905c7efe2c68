package images

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
)

// The reasons a container waits with when its image cannot be had, as
// the kubelet words them.
const (
	ReasonErrImagePull      = "ErrImagePull"
	ReasonImagePullBackOff  = "ImagePullBackOff"
	ReasonErrImageNeverPull = "ErrImageNeverPull"
	ReasonInvalidImageName  = "InvalidImageName"
)

// PullError is why an image could not be had, with the kubelet's reason
// and a message that quotes the registry.
type PullError struct {
	Reason  string
	Message string
	err     error
}

func (e *PullError) Error() string { return e.Message }
func (e *PullError) Unwrap() error { return e.err }

// Image is a pulled image, its layers unpacked.
type Image struct {
	// Reference is the reference asked for, normalised
	// (index.docker.io/library/busybox:latest).
	Reference string
	// Repository and Digest name what was pulled: Repository@Digest, the
	// top digest (an index's, for a multi-platform image), is the
	// imageID a kubelet reports and what a Revision pins.
	Repository string
	Digest     string
	// ID is the digest of the image's config.
	ID string
	// Config is the image's config: entrypoint, cmd, env, workingDir,
	// user.
	Config  v1.Config
	chainID string
}

// DigestReference is Repository@Digest.
func (i *Image) DigestReference() string { return i.Repository + "@" + i.Digest }

// Pull returns the image ref names, pulling it as policy says: Always
// asks the registry every time (its layers are pulled only when new),
// IfNotPresent only when the store has no image for ref, Never never. kc
// gives the credentials for the registry.
func (s *Store) Pull(ctx context.Context, ref string, policy corev1.PullPolicy, kc authn.Keychain) (*Image, error) {
	r, err := s.parse(ref)
	if err != nil {
		return nil, &PullError{Reason: ReasonInvalidImageName, err: err, Message: fmt.Sprintf(
			"Failed to apply default image tag %q: couldn't parse image name %q: %v", ref, ref, err)}
	}
	if policy != corev1.PullAlways {
		if img := s.present(r); img != nil {
			return img, nil
		}
	}
	if policy == corev1.PullNever {
		return nil, &PullError{Reason: ReasonErrImageNeverPull, err: os.ErrNotExist, Message: fmt.Sprintf(
			"Container image %q is not present with pull policy of Never", ref)}
	}
	img, err := s.fly(ctx, r.Name(), func(ctx context.Context) (*Image, error) { return s.pull(ctx, r, kc) })
	if err != nil {
		var pe *PullError
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, &PullError{Reason: ReasonErrImagePull, err: err, Message: fmt.Sprintf(
			"Failed to pull image %q: %v", ref, err)}
	}
	return img, nil
}

// parse parses ref as Docker and the kubelet do (a bare name is on
// Docker Hub, no tag is :latest), marking a registry listed for plain
// HTTP so that go-containerregistry speaks HTTP to it.
func (s *Store) parse(ref string) (name.Reference, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, err
	}
	if s.plainHTTP(r.Context().RegistryStr()) {
		return name.ParseReference(ref, name.Insecure)
	}
	return r, nil
}

func (s *Store) plainHTTP(host string) bool {
	guard, _ := s.http.(plainHTTPGuard)
	return slices.Contains(guard.allowed, host)
}

// present is the image r names when the store has it whole: its record
// and its top layer.
func (s *Store) present(r name.Reference) *Image {
	digest := r.Identifier()
	if _, isTag := r.(name.Tag); isTag {
		digest = s.tag(r.Name())
	}
	if !strings.HasPrefix(digest, "sha256:") {
		return nil
	}
	rec, err := s.readRecord(digest)
	if err != nil || rec.Repository != r.Context().Name() {
		return nil
	}
	if rec.ChainID != "" {
		if _, err := s.snap.Stat(context.Background(), rec.ChainID); err != nil {
			return nil
		}
	}
	return rec.image(r.Name())
}

func (rec *record) image(ref string) *Image {
	return &Image{Reference: ref, Repository: rec.Repository, Digest: rec.Digest, ID: rec.ID, Config: rec.Config, chainID: rec.ChainID}
}

// pull fetches r's manifest (the one for this platform, from an index),
// unpacks the layers the store lacks and records the image.
func (s *Store) pull(ctx context.Context, r name.Reference, kc authn.Keychain) (*Image, error) {
	desc, err := remote.Get(r, remote.WithContext(ctx), remote.WithAuthFromKeychain(kc),
		remote.WithPlatform(s.platform), remote.WithTransport(s.http))
	if err != nil {
		return nil, err
	}
	img, err := desc.Image()
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if cfg.OS != "" && cfg.OS != s.platform.OS || cfg.Architecture != "" && cfg.Architecture != s.platform.Architecture {
		return nil, fmt.Errorf("image is for %s/%s, this machine runs %s/%s",
			cfg.OS, cfg.Architecture, s.platform.OS, s.platform.Architecture)
	}
	id, err := img.ConfigName()
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	chain, err := s.unpack(ctx, layers)
	if err != nil {
		return nil, err
	}
	rec := &record{Repository: r.Context().Name(), Digest: desc.Digest.String(), ID: id.String(), Config: cfg.Config, ChainID: chain}
	if err := s.writeRecord(rec); err != nil {
		return nil, fmt.Errorf("record image: %w", err)
	}
	if _, isTag := r.(name.Tag); isTag {
		if err := s.setTag(r.Name(), rec.Digest); err != nil {
			return nil, fmt.Errorf("record tag: %w", err)
		}
	}
	return rec.image(r.Name()), nil
}

// pullTimeout bounds one pull, as the kubelet's runtime request timeout
// bounds a pull that stops making progress.
const pullTimeout = 10 * time.Minute

// flight is one pull in progress; pulls of one reference wait for it.
type flight struct {
	done chan struct{}
	img  *Image
	err  error
}

// fly runs pull once for concurrent callers of key: a Revision scaled
// from zero to ten pulls its image once.
func (s *Store) fly(ctx context.Context, key string, pull func(context.Context) (*Image, error)) (*Image, error) {
	s.mu.Lock()
	f, ok := s.flights[key]
	if !ok {
		f = &flight{done: make(chan struct{})}
		s.flights[key] = f
		s.mu.Unlock()
		// The pull outlives a caller that gives up: the next one
		// finds its layers. A registry that stalls ends it, so that
		// later pulls of the reference try again.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pullTimeout)
		f.img, f.err = pull(pctx)
		cancel()
		s.mu.Lock()
		delete(s.flights, key)
		s.mu.Unlock()
		close(f.done)
		return f.img, f.err
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.img, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
