package webhooks

import (
	"fmt"
	"path"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

// volumeSources are the volume types Knative lets a Revision use.
var volumeSources = []string{"secret", "configMap", "projected", "emptyDir", "persistentVolumeClaim"}

// reservedMountPaths cannot be mounted over in a Revision's containers.
var reservedMountPaths = []string{"/", "/dev", "/dev/log"}

// validateVolumes is Knative's ValidateVolumes and validateVolumeMounts:
// unique volumes of an allowed type, each mounted (by a container or an
// init container), and every mount naming a volume at a usable path. ps
// is at path.
func validateVolumes(ps servingv1.PodSpec, p *field.Path, features config.Features) field.ErrorList {
	var errs field.ErrorList
	mounted := map[string]bool{}
	for _, c := range append(append([]corev1.Container(nil), ps.InitContainers...), ps.Containers...) {
		for _, m := range c.VolumeMounts {
			mounted[m.Name] = true
		}
	}
	volumes := map[string]bool{}
	for i, v := range ps.Volumes {
		vp := p.Child("volumes").Index(i)
		if volumes[v.Name] {
			errs = append(errs, field.Duplicate(vp.Child("name"), v.Name))
		}
		volumes[v.Name] = true
		if !mounted[v.Name] {
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, "volume is not mounted by any container"))
		}
		errs = append(errs, validateVolumeSource(v.VolumeSource, vp)...)
		errs = append(errs, validateGatedVolume(v, vp, features)...)
	}
	for i, c := range ps.Containers {
		errs = append(errs, validateMounts(c.VolumeMounts, volumes, p.Child("containers").Index(i).Child("volumeMounts"))...)
	}
	for i, c := range ps.InitContainers {
		errs = append(errs, validateMounts(c.VolumeMounts, volumes, p.Child("initContainers").Index(i).Child("volumeMounts"))...)
	}
	return errs
}

// validateGatedVolume refuses the volume types config-features leaves
// off, in Knative's words: emptyDir (on by default), persistent volume
// claims, and a claim that is not read-only unless writes are on too (a
// writable claim outlives the Revision that wrote it).
func validateGatedVolume(v corev1.Volume, vp *field.Path, features config.Features) field.ErrorList {
	var errs field.ErrorList
	if v.EmptyDir != nil && features.PodSpecVolumesEmptyDir != config.FeatureEnabled {
		errs = append(errs, field.Forbidden(vp.Child("emptyDir"),
			fmt.Sprintf("EmptyDir volume support is disabled, but found EmptyDir volume %s (config-features kubernetes.podspec-volumes-emptydir)", v.Name)))
	}
	claim := v.PersistentVolumeClaim
	if claim == nil {
		return errs
	}
	if features.PodSpecPersistentVolumeClaim != config.FeatureEnabled {
		errs = append(errs, field.Forbidden(vp.Child("persistentVolumeClaim"),
			fmt.Sprintf("Persistent volume claim support is disabled, but found persistent volume claim %s (config-features kubernetes.podspec-persistent-volume-claim)", claim.ClaimName)))
	}
	if !claim.ReadOnly && features.PodSpecPersistentVolumeWrite != config.FeatureEnabled {
		errs = append(errs, field.Forbidden(vp.Child("persistentVolumeClaim", "readOnly"),
			fmt.Sprintf("Persistent volume write support is disabled, but found persistent volume claim %s that is not read-only (config-features kubernetes.podspec-persistent-volume-write)", claim.ClaimName)))
	}
	return errs
}

func validateVolumeSource(vs corev1.VolumeSource, vp *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range disallowedFields(vs, volumeSources...) {
		errs = append(errs, field.Forbidden(vp.Child(f), "must not set the field(s)"))
	}
	set := len(disallowedFields(vs)) // every source set, allowed or not
	switch {
	case set == 0:
		errs = append(errs, field.Required(vp, "set one of secret, configMap, projected, emptyDir or persistentVolumeClaim"))
	case set > 1:
		errs = append(errs, field.Forbidden(vp, "set only one volume source"))
	}
	return errs
}

func validateMounts(ms []corev1.VolumeMount, volumes map[string]bool, mp *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, m := range ms {
		p := mp.Index(i)
		if !volumes[m.Name] {
			errs = append(errs, field.Invalid(p.Child("name"), m.Name, "no volume in volumes has this name"))
		}
		clean := path.Clean(m.MountPath)
		switch {
		case m.MountPath == "":
			errs = append(errs, field.Required(p.Child("mountPath"), ""))
		case slices.Contains(reservedMountPaths, clean):
			errs = append(errs, field.Invalid(p.Child("mountPath"), m.MountPath, "is a reserved path"))
		case !path.IsAbs(m.MountPath):
			errs = append(errs, field.Invalid(p.Child("mountPath"), m.MountPath, "must be an absolute path"))
		case seen[clean]:
			errs = append(errs, field.Invalid(p.Child("mountPath"), m.MountPath, "must be unique"))
		}
		seen[clean] = true
		for _, f := range disallowedFields(m, "name", "readOnly", "mountPath", "subPath") {
			errs = append(errs, field.Forbidden(p.Child(f), "must not set the field(s)"))
		}
	}
	return errs
}
