package claims

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Dir is the directory knit dev provisions for a claim under root: by name
// for whoever looks, and by UID so that a claim deleted and made again
// under its name starts empty while the old one's directory waits for its
// replicas to stop.
func Dir(root, namespace, name string, uid types.UID) string {
	return filepath.Join(root, namespace, name+"-"+string(uid))
}

// Use is a claim a replica is resolving or mounts: while one exists, the
// binder keeps the claim's pvc-protection finalizer and its volume's
// directory.
type Use struct {
	// Namespace and Name are the claim's.
	Namespace, Name string
	// Dir is "" while the claim is being resolved, the directory once
	// mounted.
	Dir string
}

// usesClaim reports a use of the claim namespace/name.
func usesClaim(uses []Use, namespace, name string) bool {
	return slices.ContainsFunc(uses, func(u Use) bool { return u.Namespace == namespace && u.Name == name })
}

// usesDir reports a use of dir, the directory of a volume bound to the
// claim namespace/name: a replica mounting it, or one still resolving the
// claim, which may be about to.
func usesDir(uses []Use, namespace, name, dir string) bool {
	return slices.ContainsFunc(uses, func(u Use) bool {
		return u.Dir == dir || u.Dir == "" && u.Namespace == namespace && u.Name == name
	})
}

// VolumeDir is the directory of this machine a persistent volume is: a
// hostPath's path, made when its type is DirectoryOrCreate as the kubelet
// makes it (knit dev's own volumes are, so a directory removed by hand
// comes back empty rather than failing every replica), or a local
// volume's. owned says the pod's fsGroup applies, as the kubelet applies
// it to a volume whose plugin manages ownership — a local volume, or one
// knit dev provisioned, standing in for a provisioner's — and never to a
// hostPath someone named, which the kubelet leaves alone too.
func VolumeDir(pv *corev1.PersistentVolume) (dir string, owned bool, err error) {
	switch s := pv.Spec.PersistentVolumeSource; {
	case s.HostPath != nil:
		dir, owned = s.HostPath.Path, provisionedByKnit(pv)
		if ptr.Deref(s.HostPath.Type, corev1.HostPathUnset) == corev1.HostPathDirectoryOrCreate {
			mode, parents := os.FileMode(0o755), os.FileMode(0o755)
			if owned {
				mode, parents = dirMode, 0o700
			}
			if err := makeDir(dir, mode, parents); err != nil {
				return "", false, err
			}
		}
	case s.Local != nil:
		dir, owned = s.Local.Path, true
	default:
		return "", false, errors.New("knit dev mounts hostPath and local persistent volumes only: directories of this machine")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", false, fmt.Errorf("hostPath type check failed: %s is not a directory", dir)
	}
	return dir, owned, nil
}

// makeDir makes dir with exactly mode (not masked by the umask), and its
// missing parents with parents, when it is missing; one that exists is
// left as it is, as its users changed it.
func makeDir(dir string, mode, parents os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dir), parents); err != nil {
		return err
	}
	if err := os.Mkdir(dir, mode); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	return os.Chmod(dir, mode)
}
