package view

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Mount is one volume (or file: a pod's /etc/hosts, the image's binary,
// the container's cgroup) bound into one container's view of the
// filesystem.
type Mount struct {
	Volume   string // its name, for messages
	Source   string // on this machine: the volume's directory or, with a subPath, a path in it
	Target   string // the mountPath: absolute, in the container's view
	ReadOnly bool
}

// Plan is what one container's processes see beyond this machine's
// own filesystem: its volumes at their mount paths, and as root its
// cgroup, /dev, read-only /proc settings and hostname (package runtime's
// containerView fills it in). Each start of the container makes the view
// afresh (Enter, per platform), in a mount namespace of the process's own: the kubelet's
// containers of one pod do not see each other's mounts either, and knit
// dev's own view never changes. An empty plan (not root, outside Linux)
// is nothing to mount: the process shares knit dev's mounts.
type Plan struct {
	Mounts  []Mount // parents before children (SortMounts)
	Scratch string  // a directory of the replica's own, under knit dev's state dir, where mount points are made
	// System, when set, gives the container the rest of a container's
	// view, before its volumes (so that one may mount at /dev/shm):
	// a /dev of its own and /proc's kernel settings read-only, as a
	// container runtime makes them (see Enter).
	System bool
	// Hostname, when set, is the container's hostname, in a UTS
	// namespace of its own: the pod's, as the kubelet sets it.
	Hostname string
	// Hide, when set, is covered, after the volumes are bound, by an
	// empty read-only tmpfs (knit dev's state dir: the admin kubeconfig,
	// etcd's keys, the Git token), where the directories of Show are
	// bound back read-only (the builds the container runs).
	Hide string
	Show []string
	// Limits are the forking thread's privileges, set last: what its
	// process may ever hold.
	Limits *Privileges
}

// Privileges bound a process of knit dev's own making (ko://, knit://)
// as the engine bounds an image's container: the capability bounding set
// and no_new_privs. Both are the forking thread's, inherited by the
// child and never undone, so that thread dies with its goroutine.
type Privileges struct {
	// Capabilities are the kernel's numbers of those kept in the
	// bounding set; every other is dropped from it.
	Capabilities []int
	NoNewPrivs   bool
}

// Empty reports a plan that changes nothing: the process shares knit
// dev's mounts and hostname.
func (p *Plan) Empty() bool {
	return p == nil || len(p.Mounts) == 0 && !p.System && p.Hostname == ""
}

// Hostname is the hostname of a pod named name, as the kubelet makes
// it (a container's view and its HOSTNAME say the same): at most 63 characters, a trailing '-' or '.' of the cut trimmed.
func Hostname(name string) string {
	const maxLen = 63
	if len(name) <= maxLen {
		return name
	}
	return strings.TrimRight(name[:maxLen], "-.")
}

// SortMounts orders mounts by the depth of their paths, as containerd
// does, so that one inside another's path is made after it and stays
// visible.
func SortMounts(ms []Mount) {
	slices.SortStableFunc(ms, func(a, b Mount) int {
		return cmp.Compare(len(pathElems(a.Target)), len(pathElems(b.Target)))
	})
}

// pathElems are the elements of an absolute path: none for "/".
func pathElems(p string) []string {
	p = strings.Trim(filepath.Clean(p), "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// splitExisting splits an absolute target into its deepest existing
// ancestor and the elements missing below it (none when target exists),
// as exists sees the filesystem.
func splitExisting(target string, exists func(string) (bool, error)) (ancestor string, missing []string, err error) {
	if !filepath.IsAbs(target) {
		return "", nil, fmt.Errorf("mount path %q is not absolute", target)
	}
	elems := pathElems(target)
	ancestor = "/"
	for i, e := range elems {
		next := filepath.Join(ancestor, e)
		ok, err := exists(next)
		if err != nil {
			return "", nil, err
		}
		if !ok {
			return ancestor, elems[i:], nil
		}
		ancestor = next
	}
	return ancestor, nil, nil
}

// ErrUnsupported wraps why this machine cannot mount volumes at
// their paths.
var ErrUnsupported = errors.New("knit dev mounts volumes at their paths in a mount namespace of each container's own, which needs root on Linux")

// Supported says whether containers can have mount namespaces here
// (nil) or why not, wrapping ErrUnsupported: the runtime gives
// containers views of their own only where it is nil, and refuses
// volumes elsewhere rather than run without them.
func Supported() error { return supported() }

// supported is checkMounts (per platform) once per process. It is a fact
// about the machine and knit dev's privileges, which do not change while
// it runs, so it is kept for the process rather than per runtime.
var supported = sync.OnceValue(checkMounts)
