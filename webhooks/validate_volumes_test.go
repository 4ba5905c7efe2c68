package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestValidateVolumes(t *testing.T) {
	secret := corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}
	mounts := func(ms ...corev1.VolumeMount) servingv1.PodSpec {
		return servingv1.PodSpec{Containers: []corev1.Container{{Image: image, VolumeMounts: ms}}}
	}
	tests := []struct {
		name string
		ps   servingv1.PodSpec
		want []string
	}{{
		name: "a mounted secret",
		ps: func() servingv1.PodSpec {
			ps := mounts(corev1.VolumeMount{Name: "creds", MountPath: "/etc/creds", ReadOnly: true})
			ps.Volumes = []corev1.Volume{{Name: "creds", VolumeSource: secret}}
			return ps
		}(),
	}, {
		name: "a volume nobody mounts, a mount without a volume",
		ps: func() servingv1.PodSpec {
			ps := mounts(corev1.VolumeMount{Name: "missing", MountPath: "/data"})
			ps.Volumes = []corev1.Volume{{Name: "creds", VolumeSource: secret}}
			return ps
		}(),
		want: []string{
			"invalid value: creds: spec.volumes[0].name\nvolume is not mounted by any container",
			"invalid value: missing: spec.containers[0].volumeMounts[0].name\nno volume in volumes has this name",
		},
	}, {
		name: "a host path, and a volume with no source",
		ps: func() servingv1.PodSpec {
			ps := mounts(corev1.VolumeMount{Name: "host", MountPath: "/host"}, corev1.VolumeMount{Name: "empty", MountPath: "/empty"})
			ps.Volumes = []corev1.Volume{
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}},
				{Name: "empty"},
			}
			return ps
		}(),
		want: []string{
			"must not set the field(s): spec.volumes[0].hostPath",
			"missing field(s): spec.volumes[1]\nset one of secret, configMap, projected, emptyDir or persistentVolumeClaim",
		},
	}, {
		name: "mount paths: relative, reserved, repeated, with propagation",
		ps: func() servingv1.PodSpec {
			prop := corev1.MountPropagationBidirectional
			ps := mounts(
				corev1.VolumeMount{Name: "creds", MountPath: "data"},
				corev1.VolumeMount{Name: "creds", MountPath: "/dev/"},
				corev1.VolumeMount{Name: "creds", MountPath: "/a"},
				corev1.VolumeMount{Name: "creds", MountPath: "/a/", MountPropagation: &prop},
			)
			ps.Volumes = []corev1.Volume{{Name: "creds", VolumeSource: secret}, {Name: "creds", VolumeSource: secret}}
			return ps
		}(),
		want: []string{
			"duplicate value: creds: spec.volumes[1].name",
			"invalid value: data: spec.containers[0].volumeMounts[0].mountPath\nmust be an absolute path",
			"invalid value: /dev/: spec.containers[0].volumeMounts[1].mountPath\nis a reserved path",
			"invalid value: /a/: spec.containers[0].volumeMounts[3].mountPath\nmust be unique",
			"must not set the field(s): spec.containers[0].volumeMounts[3].mountPropagation",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validateVolumes(tc.ps, field.NewPath("spec")))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
