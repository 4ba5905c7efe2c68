package images

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"

	"github.com/containerd/containerd/v2/core/snapshots"
	"github.com/containerd/errdefs"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Options configure a Store.
type Options struct {
	// Root is the store's directory (in knit dev's state dir). It must be
	// on a filesystem overlayfs can use as an upper layer (ext4, xfs).
	Root string
	// PlainHTTPRegistries may be spoken to over plain HTTP, as
	// containerd's hosts.toml `plain-http` allows a host: "host" or
	// "host:port". A loopback registry always may; any other host is
	// reached over TLS only.
	PlainHTTPRegistries []string
	// Platform picks the manifest of an image index; zero: this
	// machine's (linux/GOARCH).
	Platform v1.Platform
	// Transport is the HTTP transport under the plain-HTTP guard; nil:
	// http.DefaultTransport.
	Transport http.RoundTripper
}

// Store holds pulled images and their unpacked layers.
type Store struct {
	root     string
	snap     snapshots.Snapshotter
	platform v1.Platform
	http     http.RoundTripper

	mu      sync.Mutex
	flights map[string]*flight // by reference: one pull at a time
	tags    map[string]string  // reference → top digest (tags.json)
}

// Open opens (creating) the store at opts.Root. Active snapshots left by
// an earlier knit dev, whose containers died with it, are removed.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Root == "" {
		return nil, errors.New("image store: no root directory")
	}
	for _, dir := range []string{opts.Root, filepath.Join(opts.Root, "images", "sha256")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("image store: %w", err)
		}
	}
	snap, err := newSnapshotter(filepath.Join(opts.Root, "snapshots"))
	if err != nil {
		return nil, fmt.Errorf("image store: overlay snapshotter at %s: %w", opts.Root, err)
	}
	platform := opts.Platform
	if platform.OS == "" {
		platform = v1.Platform{OS: "linux", Architecture: goruntime.GOARCH}
	}
	s := &Store{
		root:     opts.Root,
		snap:     snap,
		platform: platform,
		http:     GuardPlainHTTP(opts.Transport, opts.PlainHTTPRegistries),
		flights:  map[string]*flight{},
	}
	if err := s.loadTags(); err != nil {
		snap.Close()
		return nil, err
	}
	if err := s.removeActive(ctx); err != nil {
		snap.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the snapshotter's metadata.
func (s *Store) Close() error { return s.snap.Close() }

func orDefault(t http.RoundTripper) http.RoundTripper {
	if t == nil {
		return http.DefaultTransport
	}
	return t
}

// removeActive removes the snapshots that are not layers: the root
// filesystems of containers a killed knit dev left. Their mounts died
// with the mount namespaces that held them, or were unmounted by the
// runtime before the store opened.
func (s *Store) removeActive(ctx context.Context) error {
	var keys []string
	err := s.snap.Walk(ctx, func(_ context.Context, info snapshots.Info) error {
		if info.Kind != snapshots.KindCommitted {
			keys = append(keys, info.Name)
		}
		return nil
	})
	if err != nil && !errdefs.IsNotFound(err) { // a new store has no bucket yet
		return fmt.Errorf("image store: list snapshots: %w", err)
	}
	var errs []error
	for _, k := range keys {
		if err := s.snap.Remove(ctx, k); err != nil {
			errs = append(errs, fmt.Errorf("image store: remove leftover snapshot %s: %w", k, err))
		}
	}
	return errors.Join(errs...)
}

// record is what the store keeps of a pulled image.
type record struct {
	// Repository is the repository it was pulled from; Digest the top
	// digest (the index's when the reference named one), so
	// Repository@Digest is the reference a kubelet reports as imageID.
	Repository string `json:"repository"`
	Digest     string `json:"digest"`
	// ID is the digest of the image config, as containerd's image ID.
	ID      string    `json:"id"`
	Config  v1.Config `json:"config"`
	ChainID string    `json:"chainID,omitempty"` // "" for an image with no layers
}

func (s *Store) recordPath(digest string) string {
	return filepath.Join(s.root, "images", "sha256", strings.TrimPrefix(digest, "sha256:"))
}

func (s *Store) readRecord(digest string) (*record, error) {
	b, err := os.ReadFile(s.recordPath(digest))
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("image record %s: %w", digest, err)
	}
	return &r, nil
}

func (s *Store) writeRecord(r *record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return writeFileAtomic(s.recordPath(r.Digest), b)
}

func (s *Store) loadTags() error {
	s.tags = map[string]string{}
	b, err := os.ReadFile(filepath.Join(s.root, "tags.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("image store: %w", err)
	}
	if err := json.Unmarshal(b, &s.tags); err != nil {
		// A torn index loses only what tags resolved to: the next pull
		// of each asks the registry again.
		s.tags = map[string]string{}
	}
	return nil
}

// setTag records that ref resolved to digest.
func (s *Store) setTag(ref, digest string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tags[ref] == digest {
		return nil
	}
	s.tags[ref] = digest
	b, err := json.Marshal(s.tags)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(s.root, "tags.json"), b)
}

func (s *Store) tag(ref string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tags[ref]
}

// writeFileAtomic replaces path with b in one rename, so a reader never
// sees half a record.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
