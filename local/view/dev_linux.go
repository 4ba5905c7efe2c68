package view

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// devNode is a device a container's /dev holds, as runc's default
// devices: what an app may open without privileges. /dev/console is not
// among them, as in a container without a terminal.
type devNode struct {
	name         string
	major, minor uint32
}

var devNodes = []devNode{
	{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9}, {"tty", 5, 0},
}

// devLinks are /dev's symbolic links, as runc makes them.
var devLinks = [][2]string{
	{"fd", "/proc/self/fd"},
	{"stdin", "/proc/self/fd/0"},
	{"stdout", "/proc/self/fd/1"},
	{"stderr", "/proc/self/fd/2"},
	{"ptmx", "pts/ptmx"},
}

// makeDev puts a /dev of the container's own at dev, in the calling
// thread's mount namespace, built as runc builds a container's: a tmpfs
// (nosuid, 64k) holding devNodes (0666), a devpts instance of its own at
// pts with ptmx behind /dev/ptmx, a tmpfs at shm (1777, nosuid, nodev,
// noexec, 64 MiB, Docker's default size) and devLinks. A device the
// kernel will not let knit dev create (inside a user namespace) is the
// host's node, bound. /dev/mqueue is left out: an mqueue mount shows
// the IPC namespace's queues, and containers share knit dev's.
func makeDev(dev string) error {
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_STRICTATIME, "mode=755,size=65536k"); err != nil {
		return fmt.Errorf("tmpfs: %w", err)
	}
	for _, d := range devNodes {
		path := filepath.Join(dev, d.name)
		if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(d.major, d.minor))); err != nil {
			if err := bindHostDevice(path, "/dev/"+d.name); err != nil {
				return err
			}
			continue
		}
		if err := os.Chmod(path, 0o666); err != nil { // past the umask
			return err
		}
	}
	pts := filepath.Join(dev, "pts")
	if err := os.Mkdir(pts, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("devpts", pts, "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620,gid=5"); err != nil {
		return fmt.Errorf("devpts: %w", err)
	}
	shm := filepath.Join(dev, "shm")
	if err := os.Mkdir(shm, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("shm", shm, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=1777,size=67108864"); err != nil {
		return fmt.Errorf("shm: %w", err)
	}
	for _, l := range devLinks {
		if err := os.Symlink(l[1], filepath.Join(dev, l[0])); err != nil {
			return err
		}
	}
	return nil
}

// bindHostDevice binds this machine's device node host at path.
func bindHostDevice(path, host string) error {
	if err := os.WriteFile(path, nil, 0o666); err != nil {
		return err
	}
	if err := unix.Mount(host, path, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// procReadOnly are the parts of /proc a container runtime makes
// read-only, as runc's default readonlyPaths: the kernel's settings and
// triggers, which a container's root could otherwise change for the
// whole machine. A missing one (no /proc/bus) is skipped.
var procReadOnly = []string{"bus", "fs", "irq", "sys", "sysrq-trigger"}

// protectProc makes procReadOnly read-only under proc, in the calling
// thread's mount namespace: each bound on itself and remounted read-only,
// so that /proc/mounts shows /proc/sys as a read-only proc mount, as
// Knative's runtime contract asks (TestShouldHaveSysctlReadOnly).
func protectProc(proc string) error {
	for _, name := range procReadOnly {
		path := filepath.Join(proc, name)
		if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return fmt.Errorf("%s read-only: %w", path, err)
		}
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
		if err := unix.Mount("", path, "", flags, ""); err != nil {
			return fmt.Errorf("%s read-only: %w", path, err)
		}
	}
	return nil
}
