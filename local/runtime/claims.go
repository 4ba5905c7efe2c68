package runtime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/knitops/knit/local/claims"
	"github.com/knitops/knit/local/volumes"
)

// PersistentVolumeClaims. On a cluster a claim's life is split between
// the PV controller (binding, and reclaiming a released volume), a
// provisioner (making the volume), the pvc- and pv-protection controllers
// (finalizers that keep a claim while a pod uses it) and the kubelet
// (mounting). knit dev runs none of them, so the runtime stands in for
// all: its binder (package claims, run with the runtime's controllers:
// setupClaims) provisions a directory per claim,
// <state>/claims/<namespace>/<claim>-<uid>, and binds the two; a replica
// (this file) waits until the claims it names are bound, then binds their
// directories in at its mount paths as it binds an emptyDir, shared with
// every replica that names the claim; a deleted claim's directory goes
// once no replica uses it (claims.Use, claimUses).

// claimPoll is how often a replica waiting for its claims looks again: a
// claim created, or bound by the binder, starts it within that.
const claimPoll = 500 * time.Millisecond

// claimsDir holds the directories knit dev provisions for claims
// (claims.Dir). Only root may look in, as in volumesDir: containers reach
// a claim's directory through their mounts, never through this path.
func (o *Options) claimsDir() string { return filepath.Join(o.StateDir, "claims") }

// setupClaims runs the runtime's claim binder (claims.Binder) with the
// manager, so that every claim is provisioned and bound as it is created,
// and deleted claims are let go and their volumes reclaimed, whether a
// replica uses them or not. SetupWithManager calls it once the runtime
// has its API client: the binder is part of the runtime, as a replica
// that names a claim would otherwise wait for a binding nothing makes.
// The binder asks the runtime which claims replicas use (claimUses).
func (rt *Runtime) setupClaims(mgr ctrl.Manager) error {
	if rt.client == nil {
		return errors.New("claim binder: the runtime has no API client yet")
	}
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		b := &claims.Binder{Client: rt.client, Reader: rt.reader, Root: rt.opts.claimsDir(), Uses: rt.claimUses,
			FieldOwner: fieldOwner, Log: rt.log.WithName("claims")}
		b.Run(ctx)
		return nil
	}))
}

// claimUses is what every replica of the runtime uses. A replica stays
// listed in rt.deployments until its processes are gone, and stops using
// its claims then (removeVolumes), so a directory is never taken from
// under a process.
func (rt *Runtime) claimUses() []claims.Use {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var out []claims.Use
	for _, st := range rt.deployments {
		for _, r := range st.replicas {
			out = append(out, r.volumes.uses()...)
		}
	}
	return out
}

func (v *podVolumes) uses() []claims.Use {
	v.claimsMu.Lock()
	defer v.claimsMu.Unlock()
	return slices.Clone(v.using)
}

func (v *podVolumes) setUsing(uses []claims.Use) {
	v.claimsMu.Lock()
	defer v.claimsMu.Unlock()
	v.using = uses
}

func (v *podVolumes) resolved() map[string]claimMount {
	v.claimsMu.Lock()
	defer v.claimsMu.Unlock()
	return v.claims
}

func (v *podVolumes) setResolved(mounts map[string]claimMount, uses []claims.Use) {
	v.claimsMu.Lock()
	defer v.claimsMu.Unlock()
	v.claims, v.using = mounts, uses
}

// claimMount is a claim volume as a replica mounts it.
type claimMount struct {
	dir string
	// readOnly is the volume's: every mount of it is read-only.
	readOnly bool
	// owned: the pod's fsGroup applies (claims.VolumeDir says when).
	owned bool
}

// hasClaims reports a pod with a persistentVolumeClaim volume.
func hasClaims(spec *corev1.PodSpec) bool {
	return slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.PersistentVolumeClaim != nil })
}

// awaitClaims is the scheduler's volume binding check, made before the
// replica is placed (admitAndPlace): it waits until every claim the pod
// names exists and is bound, as the scheduler holds such a pod back — its
// Pod Pending, PodScheduled False, Unschedulable, in the scheduler's
// words — looking again every claimPoll, so a claim made or bound later
// starts it without a crash loop. Meanwhile the replica holds no share of
// this machine and none of its containers starts, not even one that
// mounts no claim (the queue-proxy). The directories are resolved once
// per replica (resolveClaims): every container and init container mounts
// the same ones (claimMounts). A claim that cannot be resolved for
// another reason (the API, a volume this machine cannot mount) does not
// hold placement back: the scheduler would place the pod, and the
// containers' set-up reports it as the kubelet would, FailedMount,
// retried with backoff. False when ctx ended first.
func (r *replica) awaitClaims(ctx context.Context) bool {
	if !hasClaims(r.spec) {
		return true
	}
	logged := ""
	for {
		_, waiting, err := r.resolveClaims(ctx)
		switch {
		case ctx.Err() != nil:
			return false
		case err != nil:
			r.log.Info("Replica's claims cannot be resolved; its containers retry when they mount them", "error", err.Error())
			return true
		case waiting == "":
			return true
		}
		why := fmt.Sprintf("0/1 nodes are available: %s.", waiting)
		if why != logged {
			r.log.Info("Replica waits for its persistent volume claims", "reason", why)
			logged = why
		}
		r.setUnschedulable(why)
		if !sleepCtx(ctx, claimPoll) {
			return false
		}
	}
}

// claimMounts is the directory of each of the pod's claim volumes, by
// volume name, for a container being set up: those awaitClaims resolved
// before the replica was placed, or, when that failed, resolved again. A
// placed pod no longer waits in the scheduler's words: a claim not bound
// (any longer) is a volume the kubelet cannot mount, an error the
// container's set-up retries with backoff (FailedMount).
func (r *replica) claimMounts(ctx context.Context) (map[string]claimMount, error) {
	if !hasClaims(r.spec) {
		return nil, nil
	}
	mounts, waiting, err := r.resolveClaims(ctx)
	if err == nil && waiting != "" {
		err = errors.New(waiting)
	}
	return mounts, err
}

// resolveClaims reads the pod's claims and their volumes from the API
// server (not a cache: a claim read stale could be one the binder has
// just let go): their directories by volume name, or why the pod must
// wait for them. The replica marks the claims it uses before it reads
// them, so the binder, which checks the marks before it lets a claim go,
// either sees them or lets go a claim the read then finds deleted.
func (r *replica) resolveClaims(ctx context.Context) (mounts map[string]claimMount, waiting string, err error) {
	r.volumes.resolving.Lock()
	defer r.volumes.resolving.Unlock()
	if done := r.volumes.resolved(); done != nil {
		return done, "", nil
	}
	var marks []claims.Use
	for _, v := range r.spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			marks = append(marks, claims.Use{Namespace: r.pod.Namespace, Name: v.PersistentVolumeClaim.ClaimName})
		}
	}
	r.volumes.setUsing(marks)
	mounts = map[string]claimMount{}
	var uses []claims.Use
	for _, v := range r.spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		m, waiting, err := resolveClaim(ctx, r.rt.reader, r.pod.Namespace, v.PersistentVolumeClaim)
		if err != nil || waiting != "" {
			r.volumes.setUsing(nil) // a pod that waits uses nothing, as the pvc-protection controller counts
			if err != nil {
				err = fmt.Errorf("volume %q: %w", v.Name, err)
			}
			return nil, waiting, err
		}
		mounts[v.Name] = m
		uses = append(uses, claims.Use{Namespace: r.pod.Namespace, Name: v.PersistentVolumeClaim.ClaimName, Dir: m.dir})
	}
	r.volumes.setResolved(mounts, uses)
	return mounts, "", nil
}

// resolveClaim is the directory of the claim a volume names, or, in the
// scheduler's words, why a pod must wait for it: the claim missing, being
// deleted or not bound, or its volume missing.
func resolveClaim(ctx context.Context, reader client.Reader, namespace string, src *corev1.PersistentVolumeClaimVolumeSource) (m claimMount, waiting string, err error) {
	var claim corev1.PersistentVolumeClaim
	err = reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: src.ClaimName}, &claim)
	switch {
	case apierrors.IsNotFound(err):
		return m, fmt.Sprintf("persistentvolumeclaim %q not found", src.ClaimName), nil
	case err != nil:
		return m, "", fmt.Errorf("persistentvolumeclaim %q: %w", src.ClaimName, err)
	case claim.DeletionTimestamp != nil:
		return m, fmt.Sprintf("persistentvolumeclaim %q is being deleted", src.ClaimName), nil
	case claim.Status.Phase != corev1.ClaimBound || claim.Spec.VolumeName == "":
		return m, "pod has unbound immediate PersistentVolumeClaims", nil
	}
	var pv corev1.PersistentVolume
	err = reader.Get(ctx, client.ObjectKey{Name: claim.Spec.VolumeName}, &pv)
	switch {
	case apierrors.IsNotFound(err):
		return m, "1 node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)", nil
	case err != nil:
		return m, "", fmt.Errorf("persistentvolumeclaim %q: persistentvolume %q: %w", src.ClaimName, claim.Spec.VolumeName, err)
	case pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != claim.UID:
		return m, "pod has unbound immediate PersistentVolumeClaims", nil
	}
	dir, owned, err := claims.VolumeDir(&pv)
	if err != nil {
		return m, "", fmt.Errorf("persistentvolumeclaim %q: persistentvolume %q: %w", src.ClaimName, pv.Name, err)
	}
	return claimMount{dir: dir, readOnly: src.ReadOnly, owned: owned}, "", nil
}

// ownClaim gives a claim's directory to the pod's fsGroup as the kubelet
// gives a volume that manages its ownership, when knit dev may (root) and
// should: not a read-only volume, which the kubelet leaves as it is, and,
// under fsGroupChangePolicy OnRootMismatch, not when the directory itself
// already is the group's.
func (r *replica) ownClaim(m claimMount) error {
	sc := r.spec.SecurityContext
	if !m.owned || m.readOnly || sc == nil || sc.FSGroup == nil || os.Geteuid() != 0 {
		return nil
	}
	gid := uint32(*sc.FSGroup)
	if ptr.Deref(sc.FSGroupChangePolicy, corev1.FSGroupChangeAlways) == corev1.FSGroupChangeOnRootMismatch && ownedByGroup(m.dir, gid) {
		return nil
	}
	if err := volumes.SetOwnership(m.dir, gid, false); err != nil {
		return fmt.Errorf("fsGroup %d: %w", gid, err)
	}
	return nil
}

// ownedByGroup reports a directory that volumes.SetOwnership already gave to
// gid: group-owned, group read and write, setgid — the kubelet's test for
// OnRootMismatch.
func ownedByGroup(dir string, gid uint32) bool {
	fi, err := os.Stat(dir)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Gid == gid && fi.Mode()&0o060 == 0o060 && fi.Mode()&fs.ModeSetgid != 0
}
