package claims

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// pendingClaim is a claim as the API server stores one just created.
func pendingClaim(ns, name string, uid types.UID) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid, Finalizers: []string{pvcProtectionFinalizer}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To("local"),
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
}

// fakeBinder is a binder over a fake API holding objs, with a claims
// directory of its own, whose replicas use what *uses holds.
func fakeBinder(t *testing.T, uses *[]Use, objs ...client.Object) (*Binder, client.Client) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).
		WithStatusSubresource(&corev1.PersistentVolumeClaim{}, &corev1.PersistentVolume{}).
		WithObjects(objs...).Build()
	return &Binder{Client: c, Reader: c, Root: filepath.Join(t.TempDir(), "claims"), Uses: func() []Use { return slices.Clone(*uses) },
		FieldOwner: client.FieldOwner("knit-local-runtime"), Log: logr.Discard()}, c
}

// passes runs n passes of the binder, failing the test on an error.
func passes(t *testing.T, b *Binder, n int) {
	t.Helper()
	for range n {
		if err := b.pass(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBinderProvisionsBindsAndReclaims: a pending claim gets a directory
// and a volume, bound both ways as the PV controller binds; deleted while
// a replica uses it, the claim keeps its finalizer and its directory,
// and both go once the replica does.
func TestBinderProvisionsBindsAndReclaims(t *testing.T) {
	ctx := context.Background()
	var uses []Use
	b, c := fakeBinder(t, &uses, pendingClaim("team", "data", "u1"))
	passes(t, b, 1)

	var claim corev1.PersistentVolumeClaim
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "data"}, &claim); err != nil {
		t.Fatal(err)
	}
	if claim.Spec.VolumeName != "pvc-u1" || claim.Status.Phase != corev1.ClaimBound ||
		!claim.Status.Capacity.Storage().Equal(resource.MustParse("1Gi")) || len(claim.Status.AccessModes) != 1 ||
		claim.Annotations[annBindCompleted] != "yes" || claim.Annotations[annBoundByController] != "yes" {
		t.Errorf("claim after a pass: spec %+v status %+v annotations %v", claim.Spec, claim.Status, claim.Annotations)
	}
	var pv corev1.PersistentVolume
	if err := c.Get(ctx, client.ObjectKey{Name: "pvc-u1"}, &pv); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(b.Root, "team", "data-u1")
	ref := pv.Spec.ClaimRef
	if pv.Status.Phase != corev1.VolumeBound || pv.Spec.HostPath == nil || pv.Spec.HostPath.Path != dir ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || pv.Spec.StorageClassName != "local" ||
		!pv.Spec.Capacity.Storage().Equal(resource.MustParse("1Gi")) || ref == nil || ref.UID != "u1" || ref.Name != "data" ||
		!provisionedByKnit(&pv) {
		t.Errorf("volume after a pass: spec %+v status %+v annotations %v", pv.Spec, pv.Status, pv.Annotations)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o777 {
		t.Fatalf("the claim's directory: %v %v, want it, mode 0777", fi, err)
	}

	// A replica mounts it; the claim is deleted.
	uses = []Use{{Namespace: "team", Name: "data", Dir: dir}}
	if err := c.Delete(ctx, &claim); err != nil {
		t.Fatal(err)
	}
	passes(t, b, 2)
	if err := c.Get(ctx, client.ObjectKeyFromObject(&claim), &claim); err != nil || claim.DeletionTimestamp == nil {
		t.Fatalf("claim deleted while in use: %v, want it kept by its finalizer", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("directory of a claim in use: %v", err)
	}

	uses = nil
	passes(t, b, 2)
	if err := c.Get(ctx, client.ObjectKeyFromObject(&claim), &claim); !apierrors.IsNotFound(err) {
		t.Errorf("claim once unused: %v, want it gone", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(&pv), &pv); !apierrors.IsNotFound(err) {
		t.Errorf("volume of a deleted claim: %v (phase %s), want it deleted", err, pv.Status.Phase)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("directory of a deleted claim: %v, want it removed", err)
	}
}

// TestBinderKeepsAReleasedDirectoryInUse: a claim gone at once (no
// finalizer) releases its volume, whose directory stays while a replica
// still mounts it.
func TestBinderKeepsAReleasedDirectoryInUse(t *testing.T) {
	ctx := context.Background()
	claim := pendingClaim("team", "data", "u2")
	claim.Finalizers = nil
	var uses []Use
	b, c := fakeBinder(t, &uses, claim)
	passes(t, b, 1)
	dir := Dir(b.Root, "team", "data", "u2")
	uses = []Use{{Namespace: "team", Name: "data", Dir: dir}}
	if err := c.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	passes(t, b, 2)
	var pv corev1.PersistentVolume
	if err := c.Get(ctx, client.ObjectKey{Name: "pvc-u2"}, &pv); err != nil || pv.Status.Phase != corev1.VolumeReleased {
		t.Fatalf("volume of a deleted claim in use: %v %s, want it Released", err, pv.Status.Phase)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("directory in use: %v", err)
	}
	uses = nil
	passes(t, b, 1)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("directory once unused: %v, want it removed", err)
	}
}

// TestBinderBindsAPreboundVolume: a claim naming a volume made for it is
// bound to it, not provisioned; a volume that names no claim is Available.
func TestBinderBindsAPreboundVolume(t *testing.T) {
	ctx := context.Background()
	claim := pendingClaim("team", "data", "u3")
	claim.Spec.VolumeName = "mine"
	hostPV := func(name string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: t.TempDir()}},
			},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumePending},
		}
	}
	b, c := fakeBinder(t, new([]Use), claim, hostPV("mine"), hostPV("spare"))
	passes(t, b, 1)
	var pv corev1.PersistentVolume
	if err := c.Get(ctx, client.ObjectKey{Name: "mine"}, &pv); err != nil || pv.Status.Phase != corev1.VolumeBound ||
		pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != "u3" || pv.Annotations[annBoundByController] != "yes" {
		t.Errorf("the named volume: %v %+v %v", err, pv.Spec.ClaimRef, pv.Status.Phase)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(claim), claim); err != nil || claim.Status.Phase != corev1.ClaimBound ||
		!claim.Status.Capacity.Storage().Equal(resource.MustParse("5Gi")) || claim.Annotations[annBoundByController] != "" {
		t.Errorf("the claim: %v %+v %v", err, claim.Status, claim.Annotations)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "pvc-u3"}, &pv); !apierrors.IsNotFound(err) {
		t.Errorf("a volume was provisioned for a claim that names one: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "spare"}, &pv); err != nil || pv.Status.Phase != corev1.VolumeAvailable {
		t.Errorf("a volume naming no claim: %v %s, want Available", err, pv.Status.Phase)
	}
}

func TestRemoveClaimDirStaysInside(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	for _, dir := range []string{outside, root, filepath.Join(root, "..", filepath.Base(outside))} {
		if err := removeClaimDir(root, dir); err == nil {
			t.Errorf("removeClaimDir(%s) removed a directory outside %s", dir, root)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatal(err)
	}
}
