package runtime

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/local/claims"
)

// pendingClaim is a claim as the API server stores one just created.
func pendingClaim(ns, name string, uid types.UID) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid, Finalizers: []string{"kubernetes.io/pvc-protection"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To("local"),
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
}

// TestResolveClaim: what a replica waits for, in the scheduler's words,
// and the directory it mounts once its claim is bound.
func TestResolveClaim(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bound := pendingClaim("team", "bound", "u4")
	bound.Spec.VolumeName, bound.Status.Phase = "pv-bound", corev1.ClaimBound
	lost := pendingClaim("team", "lost", "u5")
	lost.Spec.VolumeName, lost.Status.Phase = "pv-gone", corev1.ClaimBound
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-bound", Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": claims.Provisioner}},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}},
			ClaimRef:               &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: "team", Name: "bound", UID: "u4"},
		},
	}
	deleting := pendingClaim("team", "deleting", "u6")
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).
		WithStatusSubresource(&corev1.PersistentVolumeClaim{}, &corev1.PersistentVolume{}).
		WithObjects(bound, lost, pv, pendingClaim("team", "pending", "u7"), deleting).Build()
	if err := c.Delete(ctx, deleting); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ claim, waiting string }{
		{"missing", `persistentvolumeclaim "missing" not found`},
		{"pending", "pod has unbound immediate PersistentVolumeClaims"},
		{"deleting", `persistentvolumeclaim "deleting" is being deleted`},
		{"lost", "1 node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"},
		{"bound", ""},
	} {
		m, waiting, err := resolveClaim(ctx, c, "team", &corev1.PersistentVolumeClaimVolumeSource{ClaimName: tc.claim, ReadOnly: true})
		if err != nil || waiting != tc.waiting {
			t.Errorf("claim %q: waiting %q, error %v; want waiting %q", tc.claim, waiting, err, tc.waiting)
		}
		if tc.waiting == "" && (m.dir != dir || !m.readOnly || !m.owned) {
			t.Errorf("claim %q mounts %+v, want %s read-only, owned", tc.claim, m, dir)
		}
	}
}
