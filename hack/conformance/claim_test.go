package main

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestVolumeFor(t *testing.T) {
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: claimName, Namespace: testNamespace, UID: "u1"}}
	pv := volumeFor(claim, "/state/volumes/knative-pv-claim")
	if pv.Spec.StorageClassName != "" || len(pv.Spec.AccessModes) != 1 || pv.Spec.AccessModes[0] != corev1.ReadWriteOnce {
		t.Errorf("class %q, modes %v", pv.Spec.StorageClassName, pv.Spec.AccessModes)
	}
	if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.String() != "1Gi" {
		t.Errorf("capacity %s", q.String())
	}
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Name != claimName || ref.Namespace != testNamespace || ref.UID != "u1" {
		t.Errorf("claimRef %+v", ref)
	}
	if hp := pv.Spec.HostPath; hp == nil || hp.Path != "/state/volumes/knative-pv-claim" || *hp.Type != corev1.HostPathDirectory {
		t.Errorf("hostPath %+v", hp)
	}
	if !volumeServes(pv, claim, "/state/volumes/knative-pv-claim") {
		t.Error("the volume made for a claim does not serve it")
	}
	newer := claim.DeepCopy()
	newer.UID = "u2"
	if volumeServes(pv, newer, "/state/volumes/knative-pv-claim") {
		t.Error("a former claim's volume serves a new one")
	}
	if volumeServes(pv, claim, "/elsewhere") {
		t.Error("a volume serves from another directory")
	}
}

func TestEmptyDirFor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "volumes", "claim")
	must(t, os.MkdirAll(filepath.Join(dir, "old", "deep"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644))
	must(t, emptyDirFor(dir, os.Getuid()))
	entries, err := os.ReadDir(dir)
	must(t, err)
	if len(entries) != 0 {
		t.Errorf("left %v", entries)
	}
	fi, err := os.Stat(dir)
	must(t, err)
	if fi.Mode().Perm() != 0o770 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
}
