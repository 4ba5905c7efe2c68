package runtime

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// bindMount is one volume bound into one container's view of the
// filesystem.
type bindMount struct {
	volume   string // its name, for messages
	source   string // on this machine: the volume's directory or, with a subPath, a path in it
	target   string // the mountPath: absolute, in the container's view
	readOnly bool
}

// mountPlan is what one container's processes see beyond this machine's
// own filesystem: its volumes at their mount paths, and as root its
// cgroup, /dev, read-only /proc settings and hostname (containerView).
// Each start of the container makes the view afresh (enter, per
// platform), in a mount namespace of the process's own: the kubelet's
// containers of one pod do not see each other's mounts either, and knit
// dev's own view never changes. An empty plan (not root, outside Linux)
// is nothing to mount: the process shares knit dev's mounts.
type mountPlan struct {
	mounts  []bindMount // parents before children (sortMounts)
	scratch string      // a directory of the replica's own, under knit dev's state dir, where mount points are made
	// system, when set, gives the container the rest of a container's
	// view, before its volumes (so that one may mount at /dev/shm):
	// a /dev of its own and /proc's kernel settings read-only, as a
	// container runtime makes them (see enter).
	system bool
	// hostname, when set, is the container's hostname, in a UTS
	// namespace of its own: the pod's, as the kubelet sets it.
	hostname string
	// hide, when set, is covered, after the volumes are bound, by an
	// empty read-only tmpfs (knit dev's state dir: the admin kubeconfig,
	// etcd's keys, the Git token), where the directories of show are
	// bound back read-only (the builds the container runs).
	hide string
	show []string
	// limits are the forking thread's privileges, set last: what its
	// process may ever hold.
	limits *privileges
}

// privileges bound a process of knit dev's own making (ko://, knit://)
// as the engine bounds an image's container: the capability bounding set
// and no_new_privs. Both are the forking thread's, inherited by the
// child and never undone, so that thread dies with its goroutine.
type privileges struct {
	// capabilities are the kernel's numbers of those kept in the
	// bounding set; every other is dropped from it.
	capabilities []int
	noNewPrivs   bool
}

// empty reports a plan that changes nothing: the process shares knit
// dev's mounts and hostname.
func (p *mountPlan) empty() bool {
	return p == nil || len(p.mounts) == 0 && !p.system && p.hostname == ""
}

// podHostname is the hostname of a pod named name, as the kubelet makes
// it: at most 63 characters, a trailing '-' or '.' of the cut trimmed.
func podHostname(name string) string {
	const maxLen = 63
	if len(name) <= maxLen {
		return name
	}
	return strings.TrimRight(name[:maxLen], "-.")
}

// sortMounts orders mounts by the depth of their paths, as containerd
// does, so that one inside another's path is made after it and stays
// visible.
func sortMounts(ms []bindMount) {
	slices.SortStableFunc(ms, func(a, b bindMount) int {
		return cmp.Compare(len(pathElems(a.target)), len(pathElems(b.target)))
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

// errMountsUnsupported wraps why this machine cannot mount volumes at
// their paths.
var errMountsUnsupported = errors.New("knit dev mounts volumes at their paths in a mount namespace of each container's own, which needs root on Linux")

// mountSupport says, once per process, whether containers can have
// mount namespaces here (checkMounts, per platform). It is a fact about
// the machine and knit dev's privileges, which do not change while it
// runs, so it is kept for the process rather than per runtime.
var mountSupport = sync.OnceValue(checkMounts)
