package view

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Join moves the calling thread, locked to its goroutine, into the
// view of the container process pid — its mount and UTS namespaces and
// its root, which is a mirror's tmpfs when it chrooted into one — as
// nsenter does, so that an exec probe or hook sees what the container
// sees (its volumes, its /dev, the image binary bound at /ko-app) and
// the kubelet's exec into a container is matched. A thread shares its
// root and working directory with the others until it unshares them,
// and may only then join another mount namespace; it never comes back:
// stuck is true once it has begun.
func Join(pid int) (stuck bool, err error) {
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, name := range []string{"root", "ns/mnt", "ns/uts"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/%s", pid, name))
		if err != nil {
			return false, fmt.Errorf("enter the container's view: %w", err)
		}
		files = append(files, f)
	}
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return false, fmt.Errorf("enter the container's view: %w", err)
	}
	if err := unix.Setns(int(files[1].Fd()), unix.CLONE_NEWNS); err != nil {
		return true, fmt.Errorf("enter the container's mount namespace: %w", err)
	}
	if err := unix.Setns(int(files[2].Fd()), unix.CLONE_NEWUTS); err != nil {
		return true, fmt.Errorf("enter the container's UTS namespace: %w", err)
	}
	if err := unix.Fchdir(int(files[0].Fd())); err != nil {
		return true, fmt.Errorf("enter the container's root: %w", err)
	}
	if err := unix.Chroot("."); err != nil {
		return true, fmt.Errorf("enter the container's root: %w", err)
	}
	return true, nil
}
