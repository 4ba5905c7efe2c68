package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/containerd/containerd/v2/core/mount"
	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/internal/pullsecrets"
	"github.com/knitops/knit/local/engine"
	"github.com/knitops/knit/local/images"
	"github.com/knitops/knit/local/view"
)

// OCI runs container images: pulled into an image store, each run of a
// container an OCI bundle over its own snapshot of the image, started by
// runc in the replica's network namespace and cgroup. knit dev gives one
// when it runs as root on Linux and finds runc; without it an image
// that is neither ko:// nor knit:// cannot run (ImageNotRunnable).
type OCI struct {
	Images *images.Store
	Runc   engine.Runc
	// bundles holds one directory per container run: config.json, the
	// mounted root filesystem, /etc/hosts and resolv.conf; and the spare
	// root filesystems, bundles with only their rootfs.
	bundles string
	spares  *spareRoots
}

// OCIOptions configure OpenOCI.
type OCIOptions struct {
	// StateDir is knit dev's state directory: images go to
	// <StateDir>/images, bundles to <StateDir>/containers, runc's state
	// to <StateDir>/runc.
	StateDir string
	// PlainHTTPRegistries may be pulled from over plain HTTP besides
	// loopback ones ("host:port").
	PlainHTTPRegistries []string
}

// OpenOCI checks that this machine can run images (root, Linux, runc),
// removes what an earlier knit dev's containers left (their runc state,
// mounts and root filesystems) and opens the image store.
func OpenOCI(ctx context.Context, opts OCIOptions) (*OCI, error) {
	if err := view.Supported(); err != nil {
		return nil, fmt.Errorf("container images: %w", err)
	}
	runc, err := engine.FindRunc()
	if err != nil {
		return nil, err
	}
	o := &OCI{
		Runc:    engine.Runc{Path: runc, Root: filepath.Join(opts.StateDir, "runc")},
		bundles: filepath.Join(opts.StateDir, "containers"),
	}
	if err := os.MkdirAll(o.bundles, 0o700); err != nil {
		return nil, err
	}
	if err := o.removeLeftovers(ctx); err != nil {
		return nil, err
	}
	o.Images, err = images.Open(ctx, images.Options{Root: filepath.Join(opts.StateDir, "images"), PlainHTTPRegistries: opts.PlainHTTPRegistries})
	if err != nil {
		return nil, err
	}
	o.spares = newSpareRoots(o.bundles, o.Images, func(id string) {
		if err := o.teardown(context.Background(), id, o.Images); err != nil {
			slog.Warn("Spare root filesystem not removed", "run", id, "error", err.Error())
		}
	})
	return o, nil
}

// Close removes the spare root filesystems and closes the image store.
func (o *OCI) Close() error {
	o.spares.close()
	return o.Images.Close()
}

// removeLeftovers tears down the bundles a killed knit dev left: its
// containers died with it (runc's init had knit dev's runc as parent),
// but runc's state, the cgroups it made and the root filesystem mounts
// stay until removed.
func (o *OCI) removeLeftovers(ctx context.Context) error {
	entries, err := os.ReadDir(o.bundles)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if o.Runc.Kill(ctx, e.Name(), 0, false) == nil {
			// A warning, shown without -v: the last knit dev on this
			// state directory did not stop cleanly.
			slog.Warn("Killed a container an earlier knit dev's replica left running", "container", e.Name())
		}
		errs = append(errs, o.teardown(ctx, e.Name(), nil))
	}
	return errors.Join(errs...)
}

// teardown removes container run id: runc's container (killing what is
// left of it), the root filesystem's mount and snapshot (store nil: the
// store is not open yet and will remove it), the bundle.
func (o *OCI) teardown(ctx context.Context, id string, store *images.Store) error {
	bundle := filepath.Join(o.bundles, id)
	var errs []error
	if err := o.Runc.Delete(ctx, id); err != nil {
		errs = append(errs, err)
	}
	rootfs := filepath.Join(bundle, "rootfs")
	if err := mount.UnmountAll(rootfs, 0); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Errorf("unmount %s: %w", rootfs, err))
	}
	if store != nil {
		if err := store.Release(ctx, id); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(bundle); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// pullImage pulls container c's image with the credentials the kubelet
// would use: the pod's imagePullSecrets, its ServiceAccount's, then knit
// dev's own user's Docker config. The first pull of the pod template pins
// the digest its later replicas pull, as a Revision pins one.
func (r *replica) pullImage(ctx context.Context, c *corev1.Container, attempt int) (*images.Image, *failure) {
	store := r.rt.opts.OCI.Images
	pinned := r.pins.digest(c.Image)
	if pinned != "" {
		// Every replica of a template runs what its first one pulled,
		// which the store keeps: no credentials to read, no registry to
		// ask on a scale from zero.
		if img, err := store.Pull(ctx, pinned, corev1.PullNever, authn.NewMultiKeychain()); err == nil {
			return img, nil
		}
	}
	kc, err := r.pullKeychain(ctx)
	if err != nil {
		return nil, &failure{Reason: images.ReasonErrImagePull, Message: fmt.Sprintf("Failed to pull image %q: %v", c.Image, err)}
	}
	ref, policy := c.Image, defaultPullPolicy(c)
	if pinned != "" {
		ref, policy = pinned, corev1.PullIfNotPresent
	}
	img, err := store.Pull(ctx, ref, policy, kc)
	if err == nil {
		r.pins.pinDigest(c.Image, img.DigestReference())
		return img, nil
	}
	var pe *images.PullError
	if !errors.As(err, &pe) {
		return nil, &failure{Reason: images.ReasonErrImagePull, Message: err.Error()}
	}
	if pe.Reason == images.ReasonErrImagePull && attempt > 1 {
		// As the kubelet words a pull it is waiting to try again.
		return nil, &failure{Reason: images.ReasonImagePullBackOff, Message: fmt.Sprintf("Back-off pulling image %q: %s", c.Image, pe.Message)}
	}
	return nil, &failure{Reason: pe.Reason, Message: pe.Message}
}

// pullKeychain is the pod's pull credentials, as the kubelet finds them.
func (r *replica) pullKeychain(ctx context.Context) (authn.Keychain, error) {
	return pullsecrets.Keychain(ctx, r.rt.reader, r.pod.Namespace, r.spec.ServiceAccountName, r.spec.ImagePullSecrets)
}
