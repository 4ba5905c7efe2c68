package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SubPath is the path in volume dir a mount binds: dir itself, or sub
// within it, made a directory when missing as the kubelet does. A subPath
// that leads out of the volume through a symbolic link (an app can make
// one in an emptyDir) is refused, as the kubelet refuses it.
func SubPath(dir, sub string) (string, error) {
	if sub == "" {
		return dir, nil
	}
	if err := checkPath(sub); err != nil {
		return "", fmt.Errorf("subPath: %w", err)
	}
	source := filepath.Join(dir, sub)
	if _, err := os.Lstat(source); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(source, 0o755); err != nil {
			return "", fmt.Errorf("subPath: %w", err)
		}
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("subPath: %w", err)
	}
	real, err := filepath.EvalSymlinks(source)
	if err != nil {
		return "", fmt.Errorf("subPath: %w", err)
	}
	if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
		return "", fmt.Errorf("subPath %q leads out of the volume, to %s", sub, real)
	}
	return real, nil
}

// SetOwnership gives a volume to the pod's fsGroup as the kubelet's
// SetVolumeOwnership does, so a container running as another user reads
// (and, in an emptyDir or a claim, writes) it through the group: every
// file and directory group-owned by fsGroup, with group read (and write
// unless readOnly) added to its mode, directories also group search and
// setgid so that what the app makes there stays the group's. A file gone
// while the walk runs is skipped: a claim's directory is shared with
// replicas already writing to it. It takes root.
func SetOwnership(dir string, fsGroup uint32, readOnly bool) error {
	mask := fs.FileMode(0o660)
	if readOnly {
		mask = 0o440
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil {
			err = ownPath(path, d, fsGroup, mask)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	})
}

// ownPath is SetOwnership's change to one file or directory.
func ownPath(path string, d fs.DirEntry, fsGroup uint32, mask fs.FileMode) error {
	if err := os.Lchown(path, -1, int(fsGroup)); err != nil {
		return err
	}
	if d.Type()&fs.ModeSymlink != 0 {
		return nil
	}
	fi, err := d.Info()
	if err != nil {
		return err
	}
	m := fi.Mode()&(fs.ModePerm|fs.ModeSetgid|fs.ModeSetuid|fs.ModeSticky) | mask
	if d.IsDir() {
		m |= fs.ModeSetgid | 0o110
	}
	return os.Chmod(path, m)
}
