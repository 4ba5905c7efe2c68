package view

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// cover puts an empty read-only tmpfs over dir in the calling thread's
// mount namespace, and binds each directory of show (inside dir) back at
// its own path, read-only. The directories are opened before dir is
// covered and bound from their descriptors, as nothing under dir can be
// reached by path afterwards. A directory of show that does not exist is
// left out.
func cover(dir string, show []string) error {
	type kept struct {
		fd  int
		rel string
	}
	var keep []kept
	defer func() {
		for _, k := range keep {
			unix.Close(k.fd)
		}
	}()
	for _, s := range show {
		rel, err := filepath.Rel(dir, s)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			return fmt.Errorf("%s is not inside %s", s, dir)
		}
		fd, err := unix.Open(s, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("open %s: %w", s, err)
		}
		keep = append(keep, kept{fd, rel})
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("cover with a tmpfs: %w", err)
	}
	for _, k := range keep {
		target := filepath.Join(dir, k.rel)
		if err := os.MkdirAll(target, 0o755); err != nil {
			return err
		}
		src := "/proc/self/fd/" + strconv.Itoa(k.fd)
		if err := unix.Mount(src, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s back: %w", k.rel, err)
		}
		if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("make %s read-only: %w", k.rel, err)
		}
	}
	return unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=64k")
}

// Apply sets the calling thread's capability bounding set and
// no_new_privs, and empties its inheritable and ambient sets, which the
// process it forks inherits (a root child's permitted set is then the
// bounding set). The thread must not serve another goroutine afterwards.
//
// chrooted says the thread's root is a mirror of / (see Plan.Enter) rather
// than its namespace's: CAP_SYS_CHROOT is then dropped too, since with it
// a root process could chroot its way out to the namespace's own root,
// where knit dev's state dir is not covered.
func (p *Privileges) Apply(chrooted bool) error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear the ambient Capabilities: %w", err)
	}
	if err := clearInheritable(); err != nil {
		return err
	}
	last := lastCap()
	for c := 0; c <= last; c++ {
		if slices.Contains(p.Capabilities, c) && !(chrooted && c == unix.CAP_SYS_CHROOT) {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if p.NoNewPrivs {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("no_new_privs: %w", err)
		}
	}
	return nil
}

// clearInheritable empties the calling thread's inheritable capabilities.
func clearInheritable() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("read the thread's Capabilities: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear the inheritable Capabilities: %w", err)
	}
	return nil
}

// lastCap is the kernel's highest capability number.
var lastCap = sync.OnceValue(func() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 63
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 63
	}
	return n
})
