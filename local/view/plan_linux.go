package view

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// checkMounts makes a mount namespace on a thread of its own and lets it
// go with the thread.
func checkMounts() error {
	if uid := os.Geteuid(); uid != 0 {
		return fmt.Errorf("%w (knit dev runs as uid %d)", ErrUnsupported, uid)
	}
	done := make(chan error, 1)
	go func() {
		goruntime.LockOSThread() // never unlocked: the thread ends with this goroutine
		err := unix.Unshare(unix.CLONE_NEWNS)
		if err == nil {
			err = unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
		}
		done <- err
	}()
	if err := <-done; err != nil {
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return nil
}

// Enter gives the calling thread, and so the process it forks next, the
// plan's view: a mount namespace of its own in which nothing propagates
// to or from this machine's, each volume bound at its mount path
// (read-only when asked). The caller's goroutine is locked to its thread;
// stuck is true once the thread has left knit dev's namespace, for good:
// it must die with its goroutine rather than serve another (the
// runtime's startProcess goroutine keeps it until the process is gone anyway, for
// the parent-death signal).
//
// A mount path that does not exist is never created on this machine. The
// deepest directory that does exist is mirrored instead (mirror): a tmpfs
// holding a bind mount of each of its entries and the missing
// directories, put in its place in this namespace alone. So /hello/world
// costs a tmpfs standing in for / (the thread chroots into it, since a
// mount over / does not change a root already held) with /usr, /etc, /proc
// … bound into it, and a new hello/world on the tmpfs; the host's / never
// sees /hello. An overlay of the existing directory would need its upper
// layer outside the directory it covers, which / cannot offer, and would
// hide the mounts below it (/proc, /dev); bind mounts of the entries carry
// them along. The mirrors are staged under the replica's own directory in
// knit dev's state dir, removed with the replica; the mounts themselves
// end with the last process in the namespace.
//
// Why the forking thread rather than a shim re-executed in a new
// namespace to mount and exec the app: the fork already happens on a
// thread of its own that steps into the replica's network namespace, a
// Go thread may unshare its mount namespace alone (it is setns into one
// that a threaded process cannot do), and a shim would cost an exec on
// every cold start and need knit's binary in every replica, where
// Options.Executable is not always knit.
func (p *Plan) Enter() (stuck bool, err error) {
	if p.Empty() {
		return false, nil
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return true, fmt.Errorf("mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return true, fmt.Errorf("mount namespace: make mounts private: %w", err)
	}
	if p.Hostname != "" {
		if err := unix.Unshare(unix.CLONE_NEWUTS); err != nil {
			return true, fmt.Errorf("UTS namespace: %w", err)
		}
		if err := unix.Sethostname([]byte(p.Hostname)); err != nil {
			return true, fmt.Errorf("hostname %s: %w", p.Hostname, err)
		}
	}
	if p.System {
		if err := makeDev("/dev"); err != nil {
			return true, fmt.Errorf("/dev: %w", err)
		}
		if err := protectProc("/proc"); err != nil {
			return true, err
		}
	}
	var rootBefore unix.Stat_t
	if err := unix.Stat("/", &rootBefore); err != nil {
		return true, err
	}
	ours := map[string]bool{} // directories on this namespace's own tmpfs mirrors
	for i, m := range p.Mounts {
		if err := p.bind(i, m, ours); err != nil {
			return true, fmt.Errorf("volume %q at %s: %w", m.Volume, m.Target, err)
		}
	}
	if p.Hide != "" {
		if err := cover(p.Hide, p.Show); err != nil {
			return true, fmt.Errorf("hide %s: %w", p.Hide, err)
		}
	}
	if p.Limits != nil {
		var rootAfter unix.Stat_t
		if err := unix.Stat("/", &rootAfter); err != nil {
			return true, err
		}
		chrooted := rootAfter.Dev != rootBefore.Dev || rootAfter.Ino != rootBefore.Ino
		if err := p.Limits.Apply(chrooted); err != nil {
			return true, err
		}
	}
	return true, nil
}

// bind binds m.Source at m.Target, making the target (a directory, or a
// file for a file) where it is missing: in place when its nearest
// existing directory is on a mirror made for an earlier mount (a second
// volume under /), else on a new mirror.
func (p *Plan) bind(i int, m Mount, ours map[string]bool) error {
	src, err := os.Stat(m.Source)
	if err != nil {
		return err
	}
	ancestor, missing, err := splitExisting(m.Target, func(path string) (bool, error) {
		_, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		if !ours[ancestor] || makePath(ancestor, missing, src.IsDir()) != nil {
			if err := p.mirror(i, ancestor, missing, src.IsDir()); err != nil {
				return err
			}
			ours[ancestor] = true
		}
		for j := range len(missing) - 1 { // the last is the mount point, the volume's
			ours[filepath.Join(ancestor, filepath.Join(missing[:j+1]...))] = true
		}
	} else if dst, err := os.Stat(m.Target); err != nil {
		return err
	} else if dst.IsDir() != src.IsDir() {
		return fmt.Errorf("cannot mount a %s over a %s", kind(src), kind(dst))
	}
	if err := unix.Mount(m.Source, m.Target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s: %w", m.Source, err)
	}
	if !m.ReadOnly {
		return nil
	}
	// A bind mount takes its flags from a remount; keep those of what it
	// binds that a remount must not drop.
	var st unix.Statfs_t
	if err := unix.Statfs(m.Target, &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	flags |= uintptr(st.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	if err := unix.Mount("", m.Target, "", flags, ""); err != nil {
		return fmt.Errorf("make read-only: %w", err)
	}
	return nil
}

func kind(fi os.FileInfo) string {
	if fi.IsDir() {
		return "directory"
	}
	return "file"
}

// mirror puts a tmpfs in place of the existing directory dir, holding
// every entry of dir (directories and files bound, recursively, symbolic
// links copied) and the missing path below it: directories, and the last
// a file unless lastDir. See Enter for why.
func (p *Plan) mirror(i int, dir string, missing []string, lastDir bool) error {
	stage := filepath.Join(p.Scratch, strconv.Itoa(i))
	if err := os.MkdirAll(stage, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	mode, uid, gid := uint32(fi.Mode().Perm()), 0, 0
	if st, ok := fi.Sys().(*unix.Stat_t); ok { // with the sticky bit of /tmp
		mode, uid, gid = st.Mode&0o7777, int(st.Uid), int(st.Gid)
	}
	opts := fmt.Sprintf("mode=%o,uid=%d,gid=%d", mode, uid, gid)
	if err := unix.Mount("tmpfs", stage, "tmpfs", 0, opts); err != nil {
		return fmt.Errorf("tmpfs for %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := mirrorEntry(filepath.Join(dir, e.Name()), filepath.Join(stage, e.Name()), e.Type()); err != nil {
			return fmt.Errorf("mirror %s: %w", dir, err)
		}
	}
	if err := makePath(stage, missing, lastDir); err != nil {
		return err
	}
	// A mirror of a read-only directory (a read-only volume with another
	// mounted inside) stays read-only once it holds the mount point.
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return err
	}
	if st.Flags&unix.ST_RDONLY != 0 {
		if err := unix.Mount("", stage, "", unix.MS_REMOUNT|unix.MS_RDONLY, opts); err != nil {
			return fmt.Errorf("make the mirror of %s read-only: %w", dir, err)
		}
	}
	if dir != "/" {
		if err := unix.Mount(stage, dir, "", unix.MS_MOVE, ""); err != nil {
			return fmt.Errorf("put the mirror of %s in place: %w", dir, err)
		}
		return nil
	}
	if err := unix.Chroot(stage); err != nil {
		return fmt.Errorf("enter the mirror of /: %w", err)
	}
	return unix.Chdir("/")
}

// makePath makes the missing path below dir: directories, and the last a
// file unless lastDir.
func makePath(dir string, missing []string, lastDir bool) error {
	path := dir
	for j, name := range missing {
		path = filepath.Join(path, name)
		var err error
		if j < len(missing)-1 || lastDir {
			err = os.Mkdir(path, 0o755)
		} else {
			err = os.WriteFile(path, nil, 0o644)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// mirrorEntry makes dst stand for src in a mirror.
func mirrorEntry(src, dst string, typ fs.FileMode) error {
	switch {
	case typ&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case typ.IsDir():
		if err := os.Mkdir(dst, 0o755); err != nil {
			return err
		}
		return unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, "")
	default: // files, devices, sockets: any inode binds onto a file
		if err := os.WriteFile(dst, nil, 0o644); err != nil {
			return err
		}
		return unix.Mount(src, dst, "", unix.MS_BIND, "")
	}
}
