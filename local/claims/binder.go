package claims

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Provisioner is knit dev's name as the provisioner of the volumes it
// makes (their pv.kubernetes.io/provisioned-by): the only volumes whose
// directories it deletes.
const Provisioner = "knit.dev/local-path"

// The annotations and finalizers Kubernetes' volume controllers write,
// which kubectl and tools read.
const (
	annProvisionedBy       = "pv.kubernetes.io/provisioned-by"
	annBoundByController   = "pv.kubernetes.io/bound-by-controller"
	annBindCompleted       = "pv.kubernetes.io/bind-completed"
	pvcProtectionFinalizer = "kubernetes.io/pvc-protection"
	pvProtectionFinalizer  = "kubernetes.io/pv-protection"
)

// dirMode is a provisioned directory's mode: anyone may write, as in an
// emptyDir and as local-path provisioners make theirs, so an app that runs
// as a user of its own and sets no fsGroup can use its claim. Only root
// can reach it on this machine (Binder.Root).
const dirMode os.FileMode = 0o777

// Resync is how often the binder looks at every claim and volume.
const Resync = time.Second

// Binder is knit dev's provisioner and PV controller, and its pvc- and
// pv-protection controllers (Run). It binds every claim in the API server
// rather than only those replicas name: Kubernetes binds a claim of an
// Immediate class when it is created, whoever uses it, and the reason a
// class would wait for its first consumer — placing the volume on that
// pod's node — does not exist with one node; so a claim reads Bound in
// kubectl before a Revision names it, and its replicas start at once.
//
// It is one level-driven pass over the manager's cache every Resync
// rather than a controller of watches: what it does with a volume depends
// on its claim, on the claim's volume and on which replicas use the claim
// (which no watch reports: Uses), a pass over the cached claims and
// volumes costs microseconds, and a replica waiting for a claim looks
// again itself. A write refused as a conflict (the cache behind the
// binder's own last write) is retried by the next pass.
type Binder struct {
	// Client lists claims and volumes (the manager's cache) and writes
	// them.
	Client client.Client
	// Reader reads a claim from the API server itself before its volume
	// is released: the cache may not have a claim just created.
	Reader client.Reader
	// Root is the directory provisioned claims' directories are made in
	// (Dir), and the only one the binder deletes in.
	Root string
	// Uses is what replicas use now: while a claim or a directory is
	// used, the binder keeps the claim's finalizer and the directory.
	Uses func() []Use
	// FieldOwner names the binder's writes in managedFields.
	FieldOwner client.FieldOwner
	// Log is where the binder says what it did, and once what waits.
	Log logr.Logger
	// noted is what was last logged of each object that waits or fails,
	// so that one stuck claim is one line, not one a pass.
	noted map[types.UID]string
}

// Run binds, provisions and reclaims until ctx ends, a pass every Resync.
func (b *Binder) Run(ctx context.Context) {
	tick := time.NewTicker(Resync)
	defer tick.Stop()
	for {
		if err := b.pass(ctx); ctx.Err() == nil {
			b.report("", err) // the lists' failure, once
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// pass syncs every claim, then every volume.
func (b *Binder) pass(ctx context.Context) error {
	var claims corev1.PersistentVolumeClaimList
	if err := b.Client.List(ctx, &claims); err != nil {
		return fmt.Errorf("list persistentvolumeclaims: %w", err)
	}
	var pvs corev1.PersistentVolumeList
	if err := b.Client.List(ctx, &pvs); err != nil {
		return fmt.Errorf("list persistentvolumes: %w", err)
	}
	seen := map[types.UID]bool{}
	for i := range claims.Items {
		c := &claims.Items[i]
		seen[c.UID] = true
		b.report(c.UID, b.syncClaim(ctx, c, pvs.Items), "claim", klog.KObj(c))
	}
	for i := range pvs.Items {
		pv := &pvs.Items[i]
		seen[pv.UID] = true
		b.report(pv.UID, b.syncVolume(ctx, pv, claims.Items), "volume", pv.Name)
	}
	for uid := range b.noted {
		if !seen[uid] {
			delete(b.noted, uid)
		}
	}
	return nil
}

// errWaits is an object waiting for something the binder cannot give: a
// reason to log once, not a failure.
type errWaits struct{ why string }

func (e errWaits) Error() string { return e.why }

// report logs what syncing an object ended in when it changed: a
// failure, or why it waits. A conflict is the cache behind a write of the
// binder's own; the next pass reads it afresh.
func (b *Binder) report(uid types.UID, err error, keysAndValues ...any) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if apierrors.IsConflict(err) {
		b.Log.V(1).Info("Stale, retried next pass", append(keysAndValues, "error", msg)...)
		return
	}
	if msg == b.noted[uid] {
		return
	}
	if b.noted == nil {
		b.noted = map[types.UID]string{}
	}
	b.noted[uid] = msg
	var waits errWaits
	switch {
	case err == nil:
	case errors.As(err, &waits):
		b.Log.Info("Waiting", append(keysAndValues, "reason", msg)...)
	default:
		b.Log.Error(err, "Not synced", keysAndValues...)
	}
}

// syncClaim lets go of a claim being deleted once no replica uses it, and
// binds a pending one to its volume, provisioning it if need be.
func (b *Binder) syncClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim, pvs []corev1.PersistentVolume) error {
	switch {
	case claim.DeletionTimestamp != nil:
		return b.unprotectClaim(ctx, claim)
	case claim.Status.Phase != corev1.ClaimPending && claim.Status.Phase != "":
		return nil // Bound, or Lost: the PV controller leaves those be too
	}
	pv, err := b.volumeFor(ctx, claim, pvs)
	if err != nil {
		return err
	}
	return b.bind(ctx, claim, pv)
}

// unprotectClaim is the pvc-protection controller's part: a claim being
// deleted keeps its finalizer while a replica uses it, so that its volume
// outlives every mount, and loses it once none does; the API server then
// removes it, and its volume is released (syncVolume).
func (b *Binder) unprotectClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	if !controllerutil.ContainsFinalizer(claim, pvcProtectionFinalizer) {
		return nil
	}
	if usesClaim(b.Uses(), claim.Namespace, claim.Name) {
		return errWaits{"deleted, but a replica still uses it"}
	}
	return b.dropFinalizer(ctx, claim, pvcProtectionFinalizer)
}

// volumeFor is the volume a pending claim binds to, as the PV controller
// picks it: the one the claim names; else one that names the claim (made
// for it beforehand, or provisioned by an earlier pass); else a new one,
// provisioned. Capacity, class and access modes of a volume named either
// way are taken as they are. An existing volume that names neither is
// never matched: knit dev provisions instead.
func (b *Binder) volumeFor(ctx context.Context, claim *corev1.PersistentVolumeClaim, pvs []corev1.PersistentVolume) (*corev1.PersistentVolume, error) {
	if name := claim.Spec.VolumeName; name != "" {
		for i := range pvs {
			if pv := &pvs[i]; pv.Name == name && (pv.Spec.ClaimRef == nil || refersTo(pv.Spec.ClaimRef, claim)) {
				return pv, nil
			}
		}
		return nil, errWaits{fmt.Sprintf("persistentvolume %q, which the claim names, does not exist or is bound to another claim", name)}
	}
	for i := range pvs {
		if refersTo(pvs[i].Spec.ClaimRef, claim) {
			return &pvs[i], nil
		}
	}
	if why := unprovisionable(claim); why != "" {
		return nil, errWaits{why}
	}
	return b.provision(ctx, claim)
}

// refersTo reports a claimRef naming claim: by name, with its UID or, as
// one written beforehand may be, none.
func refersTo(ref *corev1.ObjectReference, claim *corev1.PersistentVolumeClaim) bool {
	return ref != nil && ref.Namespace == claim.Namespace && ref.Name == claim.Name && (ref.UID == "" || ref.UID == claim.UID)
}

// unprovisionable says why knit dev cannot provision claim ("" when it
// can): a directory stands in for neither a raw block device nor a
// volume filled from a data source, and a claim with a selector asks for
// a volume that exists, which the PV controller never provisions either.
func unprovisionable(claim *corev1.PersistentVolumeClaim) string {
	switch {
	case ptr.Deref(claim.Spec.VolumeMode, corev1.PersistentVolumeFilesystem) == corev1.PersistentVolumeBlock:
		return "knit dev provisions directories, not raw block volumes (volumeMode Block)"
	case claim.Spec.DataSource != nil || claim.Spec.DataSourceRef != nil:
		return "knit dev provisions empty directories, and cannot fill one from the claim's data source"
	case claim.Spec.Selector != nil:
		return "a claim with a selector binds only to a persistent volume that matches it, which knit dev does not provision"
	}
	return ""
}

// provision makes claim's directory and its volume, created already
// naming the claim as a provisioner creates it. nil when the volume
// exists already (an earlier pass's, not yet in the cache).
func (b *Binder) provision(ctx context.Context, claim *corev1.PersistentVolumeClaim) (*corev1.PersistentVolume, error) {
	dir := Dir(b.Root, claim.Namespace, claim.Name, claim.UID)
	if err := makeDir(dir, dirMode, 0o700); err != nil { // only root reaches Root
		return nil, fmt.Errorf("provision a directory: %w", err)
	}
	pv := provisionedVolume(claim, dir)
	if err := b.Client.Create(ctx, pv, b.FieldOwner); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("create persistentvolume %s: %w", pv.Name, err)
	}
	b.Log.Info("Provisioned a volume", "claim", klog.KObj(claim), "volume", pv.Name, "path", dir)
	return pv, nil
}

// provisionedVolume is the volume knit dev provisions for claim in dir,
// named as external provisioners name theirs: the claim's request as its
// capacity (recorded, not enforced: a directory has no size), its access
// modes (every replica on this one machine may write a ReadWriteOnce
// claim, as every pod on one node may) and class, reclaim policy Delete.
func provisionedVolume(claim *corev1.PersistentVolumeClaim, dir string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "pvc-" + string(claim.UID),
			Annotations: map[string]string{annProvisionedBy: Provisioner},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: claim.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   claim.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              ptr.Deref(claim.Spec.StorageClassName, ""),
			VolumeMode:                    ptr.To(corev1.PersistentVolumeFilesystem),
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: dir, Type: ptr.To(corev1.HostPathDirectoryOrCreate),
			}},
			ClaimRef: claimRef(claim),
		},
	}
}

// claimRef is a volume's reference to claim, as the PV controller writes it.
func claimRef(claim *corev1.PersistentVolumeClaim) *corev1.ObjectReference {
	return &corev1.ObjectReference{
		Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace, Name: claim.Name,
		UID: claim.UID, ResourceVersion: claim.ResourceVersion,
	}
}

// provisionedByKnit reports a volume knit dev provisioned.
func provisionedByKnit(pv *corev1.PersistentVolume) bool {
	return pv.Annotations[annProvisionedBy] == Provisioner
}

// bind binds claim and pv as the PV controller's bind does, in its
// order, each step skipped when done already (an earlier pass stopped
// midway): the volume's claimRef, its phase Bound, the claim's
// volumeName, its status Bound with the volume's capacity and access
// modes. A nil pv is none yet.
func (b *Binder) bind(ctx context.Context, claim *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) error {
	if pv == nil {
		return nil
	}
	if err := b.bindVolume(ctx, pv, claim); err != nil {
		return fmt.Errorf("bind persistentvolume %s: %w", pv.Name, err)
	}
	if err := b.bindClaim(ctx, claim, pv); err != nil {
		return fmt.Errorf("bind to persistentvolume %s: %w", pv.Name, err)
	}
	b.Log.Info("Bound a claim", "claim", klog.KObj(claim), "volume", pv.Name)
	return nil
}

func (b *Binder) bindVolume(ctx context.Context, pv *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) error {
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != claim.UID {
		pv.Spec.ClaimRef = claimRef(claim)
		metav1.SetMetaDataAnnotation(&pv.ObjectMeta, annBoundByController, "yes")
		if err := b.Client.Update(ctx, pv, b.FieldOwner); err != nil {
			return err
		}
	}
	if pv.Status.Phase == corev1.VolumeBound {
		return nil
	}
	pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}
	return b.Client.Status().Update(ctx, pv)
}

func (b *Binder) bindClaim(ctx context.Context, claim *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) error {
	if claim.Spec.VolumeName != pv.Name || claim.Annotations[annBindCompleted] != "yes" {
		if claim.Spec.VolumeName == "" {
			metav1.SetMetaDataAnnotation(&claim.ObjectMeta, annBoundByController, "yes")
		}
		claim.Spec.VolumeName = pv.Name
		metav1.SetMetaDataAnnotation(&claim.ObjectMeta, annBindCompleted, "yes")
		if err := b.Client.Update(ctx, claim, b.FieldOwner); err != nil {
			return err
		}
	}
	claim.Status.Phase = corev1.ClaimBound
	claim.Status.Capacity = pv.Spec.Capacity
	claim.Status.AccessModes = pv.Spec.AccessModes
	return b.Client.Status().Update(ctx, claim)
}

// syncVolume releases a volume whose claim is gone, lets go of one being
// deleted that no claim holds (pv-protection), and makes a new one that
// names no claim Available, as the PV controller does.
func (b *Binder) syncVolume(ctx context.Context, pv *corev1.PersistentVolume, claims []corev1.PersistentVolumeClaim) error {
	switch {
	case released(pv, claims):
		return b.release(ctx, pv)
	case pv.DeletionTimestamp != nil:
		return b.unprotectVolume(ctx, pv)
	case pv.Spec.ClaimRef == nil && (pv.Status.Phase == corev1.VolumePending || pv.Status.Phase == ""):
		return b.setPhase(ctx, pv, corev1.VolumeAvailable)
	}
	return nil
}

// released reports a volume bound to a claim that is not among claims: the
// claim deleted, or deleted and made again under its name (another UID).
// One that names a claim by name alone waits for it.
func released(pv *corev1.PersistentVolume, claims []corev1.PersistentVolumeClaim) bool {
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.UID == "" {
		return false
	}
	for i := range claims {
		if claims[i].UID == ref.UID {
			return false
		}
	}
	return true
}

// release handles a volume whose claim is gone as the PV controller does:
// it is Released; then knit dev's own, reclaim policy Delete, goes with
// its directory (reclaim), and any other stays Released — Retain, or a
// volume knit dev did not make and may not delete — unless it is being
// deleted. The claim's absence is read from the API server first: the
// cache may not have a claim just created, and a directory removed is
// gone for good.
func (b *Binder) release(ctx context.Context, pv *corev1.PersistentVolume) error {
	ref := pv.Spec.ClaimRef
	var claim corev1.PersistentVolumeClaim
	err := b.Reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &claim)
	switch {
	case err == nil && claim.UID == ref.UID:
		return nil
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("persistentvolumeclaim %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	if pv.Status.Phase != corev1.VolumeReleased && pv.Status.Phase != corev1.VolumeFailed {
		if err := b.setPhase(ctx, pv, corev1.VolumeReleased); err != nil {
			return err
		}
		b.Log.Info("Released a volume", "volume", pv.Name, "claim", klog.KRef(ref.Namespace, ref.Name))
	}
	if provisionedByKnit(pv) && pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete {
		return b.reclaim(ctx, pv)
	}
	return b.unprotectVolume(ctx, pv)
}

// reclaim deletes a released volume of knit dev's and its directory, once
// no replica uses it: the directory first, so that a volume deleted is
// never one whose data is left behind.
func (b *Binder) reclaim(ctx context.Context, pv *corev1.PersistentVolume) error {
	ref, dir := pv.Spec.ClaimRef, pv.Spec.HostPath.Path
	if usesDir(b.Uses(), ref.Namespace, ref.Name, dir) {
		return errWaits{"released, but a replica still uses its directory"}
	}
	if err := removeClaimDir(b.Root, dir); err != nil {
		return err
	}
	if err := b.dropFinalizer(ctx, pv, pvProtectionFinalizer); err != nil {
		return err
	}
	if err := b.Client.Delete(ctx, pv, client.Preconditions{UID: &pv.UID}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete persistentvolume %s: %w", pv.Name, err)
	}
	b.Log.Info("Deleted a released volume and its directory", "volume", pv.Name, "path", dir)
	return nil
}

// removeClaimDir removes a provisioned directory, and its namespace's once
// empty. It refuses any path outside root, the claims directory: a
// volume's path is the API's to say, and this runs as root.
func removeClaimDir(root, dir string) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || !filepath.IsAbs(dir) {
		return fmt.Errorf("refusing to delete %s: not a directory knit dev provisioned under %s", dir, root)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	_ = os.Remove(filepath.Dir(dir)) // the namespace's, once empty
	return nil
}

// unprotectVolume is the pv-protection controller's part: a volume being
// deleted loses its finalizer once it is not Bound.
func (b *Binder) unprotectVolume(ctx context.Context, pv *corev1.PersistentVolume) error {
	if pv.DeletionTimestamp == nil || pv.Status.Phase == corev1.VolumeBound || !controllerutil.ContainsFinalizer(pv, pvProtectionFinalizer) {
		return nil
	}
	return b.dropFinalizer(ctx, pv, pvProtectionFinalizer)
}

// setPhase writes a volume's phase.
func (b *Binder) setPhase(ctx context.Context, pv *corev1.PersistentVolume, phase corev1.PersistentVolumePhase) error {
	pv.Status = corev1.PersistentVolumeStatus{Phase: phase}
	if err := b.Client.Status().Update(ctx, pv); err != nil {
		return fmt.Errorf("persistentvolume %s phase %s: %w", pv.Name, phase, err)
	}
	return nil
}

// dropFinalizer removes finalizer from obj, if it has it, with a patch
// that fails on a stale object rather than drop a finalizer added since.
func (b *Binder) dropFinalizer(ctx context.Context, obj client.Object, finalizer string) error {
	if !controllerutil.ContainsFinalizer(obj, finalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(obj, finalizer)
	if err := b.Client.Patch(ctx, obj, patch, b.FieldOwner); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer %s: %w", finalizer, err)
	}
	return nil
}
