package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	// claimFile is the PersistentVolumeClaim Knative's CI creates before
	// e2e/pvc, whose Service mounts it by name.
	claimFile = "test/config/pvc/pvc.yaml"
	claimName = "knative-pv-claim"
	// testUser is the test images' user (ko's nonroot 65532), as which
	// e2e/pvc's container writes to the claim; it sets fsGroup 65532 too.
	testUser = 65532
	// volumeName is the PersistentVolume made for the claim on the cluster.
	volumeName = "knit-conformance-" + claimName
	// claimWait bounds the wait for the claim to be Bound. It only warns:
	// a claim that never binds fails e2e/pvc, which says so better.
	claimWait = time.Minute
)

// ensureClaim makes Knative's test claim in serving-tests as its CI does,
// unless it is there already, and waits for it to be Bound. In knit dev
// that is all: knit dev binds claims itself. On the cluster, whose
// default StorageClass has no provisioner, pvDir is the directory of a
// PersistentVolume made for the claim (ensureVolume).
func ensureClaim(ctx context.Context, kube kubernetes.Interface, pvDir string) error {
	objs, err := knativeFiles(ctx, claimFile)
	if err != nil {
		return err
	}
	if len(objs) != 1 {
		return fmt.Errorf("%s: %d objects, want the one claim", claimFile, len(objs))
	}
	want, ok := objs[0].(*corev1.PersistentVolumeClaim)
	if !ok {
		return fmt.Errorf("%s: a %T, want a PersistentVolumeClaim", claimFile, objs[0])
	}
	claims := kube.CoreV1().PersistentVolumeClaims(want.Namespace)
	var claim *corev1.PersistentVolumeClaim
	for began := time.Now(); ; {
		claim, err = claims.Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			claim, err = claims.Create(ctx, want, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				continue
			}
		}
		if err != nil {
			return fmt.Errorf("claim %s/%s: %w", want.Namespace, want.Name, err)
		}
		// One a former run deleted is still held by its pods'
		// protection finalizer: a new one can be made once it is gone.
		if claim.DeletionTimestamp == nil {
			break
		}
		if time.Since(began) > claimWait {
			return fmt.Errorf("claim %s/%s: still being deleted after %s", want.Namespace, want.Name, claimWait)
		}
		sleep(ctx, time.Second)
	}
	if pvDir != "" {
		if err := ensureVolume(ctx, kube, claim, pvDir); err != nil {
			return err
		}
	}
	for began := time.Now(); claim.Status.Phase != corev1.ClaimBound; {
		if time.Since(began) > claimWait || ctx.Err() != nil {
			slog.Warn("The test claim is not Bound; running e2e/pvc anyway", "claim", want.Namespace+"/"+want.Name, "phase", claim.Status.Phase)
			return nil
		}
		sleep(ctx, time.Second)
		if claim, err = claims.Get(ctx, want.Name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("claim %s/%s: %w", want.Namespace, want.Name, err)
		}
	}
	slog.Info("The test claim is Bound", "claim", want.Namespace+"/"+want.Name, "volume", claim.Spec.VolumeName)
	return nil
}

// volumeFor is the PersistentVolume that claim binds to on the cluster:
// a hostPath directory on the node, 1Gi, ReadWriteOnce like the claim.
// Its claimRef (with the claim's uid) binds it to the claim before
// anything else could: the PV controller binds a claim to the volume that
// names it whatever their storage classes and the class's binding mode,
// so neither the claim's defaulted class (the test cluster's `local`, no
// provisioner, WaitForFirstConsumer, whose volumes up.sh keeps for the
// chart's StatefulSets) nor the volume's lack of one stand in the way.
// Retain: nothing could delete a hostPath volume's data anyway.
func volumeFor(claim *corev1.PersistentVolumeClaim, dir string) *corev1.PersistentVolume {
	dirType := corev1.HostPathDirectory
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: volumeName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              "",
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: &dirType},
			},
			ClaimRef: &corev1.ObjectReference{
				APIVersion: "v1", Kind: "PersistentVolumeClaim",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID,
			},
		},
	}
}

// volumeServes says whether an existing volume is the one volumeFor makes
// for this claim, so it can stay: one left by a former claim of the same
// name (another uid) would stay Released and never bind the new one.
func volumeServes(pv *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim, dir string) bool {
	ref := pv.Spec.ClaimRef
	return pv.DeletionTimestamp == nil && ref != nil &&
		ref.Namespace == claim.Namespace && ref.Name == claim.Name && ref.UID == claim.UID &&
		pv.Spec.HostPath != nil && pv.Spec.HostPath.Path == dir
}

// ensureVolume makes dir the claim's volume on the cluster.
//
// The directory: the node runs on this machine, its daemons in a mount
// namespace of their own that hack/cluster/up.sh unshares from this one
// with slave propagation. It starts as a copy of this machine's mounts
// and receives the ones made here later; its only mounts of its own are
// a tmpfs on /run/containerd, /var/log/containers and a few /proc/sys
// files. So a path outside those names the same directory here and for
// the kubelet, which bind-mounts a hostPath volume's directory into the
// pod as it finds it: made here, it is what the test's container sees.
// The Makefile passes a directory under the cluster's state dir
// (STATE/volumes, beside up.sh's own volumes) so it goes with the cluster
// (down.sh deletes STATE/volumes). The kubelet does not apply fsGroup to
// a hostPath volume, and e2e/pvc's container writes as the unprivileged
// testUser, so the directory is made that user's (mode 0770), and emptied:
// the test must find only what it wrote itself.
func ensureVolume(ctx context.Context, kube kubernetes.Interface, claim *corev1.PersistentVolumeClaim, dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("-pv-dir %s: must be absolute (the node resolves it)", dir)
	}
	if err := emptyDirFor(dir, testUser); err != nil {
		return err
	}
	pvs := kube.CoreV1().PersistentVolumes()
	want := volumeFor(claim, dir)
	pv, err := pvs.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case err == nil && volumeServes(pv, claim, dir):
		return nil
	case err == nil:
		// A Released volume has no claim to protect it: it goes at once.
		if err := pvs.Delete(ctx, want.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete the stale volume %s: %w", want.Name, err)
		}
		for began := time.Now(); ; sleep(ctx, time.Second) {
			_, err := pvs.Get(ctx, want.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if err != nil {
				return err
			}
			if time.Since(began) > claimWait {
				return fmt.Errorf("the stale volume %s: not deleted within %s", want.Name, claimWait)
			}
		}
	case !apierrors.IsNotFound(err):
		return err
	}
	if _, err := pvs.Create(ctx, want, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create volume %s: %w", want.Name, err)
	}
	slog.Info("Made the test claim's volume", "volume", want.Name, "dir", dir)
	return nil
}

// emptyDirFor makes dir an empty directory that uid owns, mode 0770.
func emptyDirFor(dir string, uid int) error {
	if err := os.MkdirAll(dir, 0o770); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	errs = append(errs, os.Chown(dir, uid, uid), os.Chmod(dir, 0o770))
	return errors.Join(errs...)
}
