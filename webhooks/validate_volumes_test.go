package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
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
			got := messages(validateVolumes(tc.ps, field.NewPath("spec"), DefaultConfig().Features))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGatedVolumes(t *testing.T) {
	claim := func(readOnly bool) corev1.Volume {
		return corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "db", ReadOnly: readOnly}}}
	}
	scratch := corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	features := func(set func(*config.Features)) config.Features {
		f := DefaultConfig().Features
		set(&f)
		return f
	}
	tests := []struct {
		name     string
		v        corev1.Volume
		features config.Features
		want     []string
	}{{
		name: "emptyDir is on by default", v: scratch, features: DefaultConfig().Features,
	}, {
		name: "emptyDir switched off", v: scratch,
		features: features(func(f *config.Features) { f.PodSpecVolumesEmptyDir = config.FeatureDisabled }),
		want:     []string{"EmptyDir volume support is disabled, but found EmptyDir volume data (config-features kubernetes.podspec-volumes-emptydir): spec.volumes[0].emptyDir"},
	}, {
		name: "a read-only claim while claims are off", v: claim(true), features: DefaultConfig().Features,
		want: []string{"Persistent volume claim support is disabled, but found persistent volume claim db (config-features kubernetes.podspec-persistent-volume-claim): spec.volumes[0].persistentVolumeClaim"},
	}, {
		name: "a read-only claim with claims on", v: claim(true),
		features: features(func(f *config.Features) { f.PodSpecPersistentVolumeClaim = config.FeatureEnabled }),
	}, {
		name: "a writable claim without writes", v: claim(false),
		features: features(func(f *config.Features) { f.PodSpecPersistentVolumeClaim = config.FeatureEnabled }),
		want:     []string{"Persistent volume write support is disabled, but found persistent volume claim db that is not read-only (config-features kubernetes.podspec-persistent-volume-write): spec.volumes[0].persistentVolumeClaim.readOnly"},
	}, {
		name: "a writable claim with writes", v: claim(false),
		features: features(func(f *config.Features) {
			f.PodSpecPersistentVolumeClaim, f.PodSpecPersistentVolumeWrite = config.FeatureEnabled, config.FeatureEnabled
		}),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Mounted by an init container alone: that counts as mounted.
			ps := servingv1.PodSpec{
				Containers:     []corev1.Container{{Image: image}},
				InitContainers: []corev1.Container{{Image: image, VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
				Volumes:        []corev1.Volume{tc.v},
			}
			got := messages(validateVolumes(ps, field.NewPath("spec"), tc.features))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
