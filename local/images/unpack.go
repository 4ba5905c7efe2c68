package images

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/containerd/errdefs"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/identity"
)

// unpack makes sure a committed snapshot exists for every prefix of
// layers, keyed by its chain ID, as containerd's unpacker does, and
// returns the top one's ("" for no layers). Layers already unpacked, by
// this image or another, are not downloaded.
func (s *Store) unpack(ctx context.Context, layers []v1.Layer) (string, error) {
	var diffIDs []digest.Digest
	parent := ""
	for i, l := range layers {
		diffID, err := l.DiffID()
		if err != nil {
			return "", fmt.Errorf("layer %d: %w", i, err)
		}
		diffIDs = append(diffIDs, digest.Digest(diffID.String()))
		chain := identity.ChainID(diffIDs).String()
		if _, err := s.snap.Stat(ctx, chain); err != nil {
			if err := s.applyLayer(ctx, l, chain, parent); err != nil {
				return "", fmt.Errorf("layer %d (%s): %w", i, diffID, err)
			}
		}
		parent = chain
	}
	return parent, nil
}

// applyLayer unpacks l above parent and commits it as chain.
func (s *Store) applyLayer(ctx context.Context, l v1.Layer, chain, parent string) (err error) {
	key := fmt.Sprintf("extract-%d-%s", time.Now().UnixNano(), chain)
	mounts, err := s.snap.Prepare(ctx, key, parent)
	if err != nil {
		return fmt.Errorf("prepare snapshot: %w", err)
	}
	defer func() {
		if err != nil {
			_ = s.snap.Remove(ctx, key)
		}
	}()
	rc, err := l.Uncompressed()
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := apply(ctx, mounts, rc); err != nil {
		return err
	}
	// The digest is checked when the stream ends: read what the tar
	// reader left (padding), so a corrupt blob fails here.
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return err
	}
	if err := rc.Close(); err != nil {
		return err
	}
	if err := s.snap.Commit(ctx, chain, key); err != nil {
		if errors.Is(err, errdefs.ErrAlreadyExists) { // another image's pull got there first
			_ = s.snap.Remove(ctx, key)
			return nil
		}
		return fmt.Errorf("commit snapshot: %w", err)
	}
	return nil
}
