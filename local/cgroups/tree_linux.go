package cgroups

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupControllers are the controllers a container's limits need.
var cgroupControllers = []string{"memory", "cpu"}

// emptyTimeout bounds the wait for a killed cgroup's processes to be
// gone before it is removed: the kernel reaps a SIGKILLed process in
// microseconds unless it is stuck in the kernel (D state).
const emptyTimeout = 2 * time.Second

// cgroupHost is where this process's own cgroups are: one directory per
// controller in cgroup v1, one in v2's unified hierarchy.
type cgroupHost struct {
	v2     bool
	dirs   map[string]string // controller → this process's cgroup directory
	points map[string]string // controller → where its hierarchy is mounted
}

// parseCgroupHost finds this process's cgroup directory for each of
// cgroupControllers from /proc/self/cgroup ("id:controllers:path") and
// /proc/self/mountinfo (where each hierarchy is mounted, and which of its
// directories the mount shows). A controller bound to a v1 hierarchy is
// used there (v1 or hybrid, as on machines where systemd mounts only an
// empty unified tree); else the unified hierarchy's. A controller with no
// mounted hierarchy is left out.
func parseCgroupHost(procCgroup, mountinfo []byte) (cgroupHost, error) {
	type mount struct{ root, point string }
	v1Mounts := map[string]mount{}
	var v2Mount *mount
	for line := range bytes.Lines(mountinfo) {
		pre, post, ok := strings.Cut(strings.TrimSpace(string(line)), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		m := mount{root: f[3], point: unescapeMountinfo(f[4])}
		switch g[0] {
		case "cgroup2":
			v2Mount = &m
		case "cgroup":
			for _, opt := range strings.Split(g[2], ",") {
				v1Mounts[opt] = m
			}
		}
	}
	h := cgroupHost{dirs: map[string]string{}, points: map[string]string{}}
	var v2Path string
	hasV2 := false
	for line := range bytes.Lines(procCgroup) {
		parts := strings.SplitN(strings.TrimSpace(string(line)), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2Path, hasV2 = parts[2], true
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			m, mounted := v1Mounts[c]
			if !mounted || !slices.Contains(cgroupControllers, c) {
				continue
			}
			if dir, ok := below(m.point, m.root, parts[2]); ok {
				h.dirs[c], h.points[c] = dir, m.point
			}
		}
	}
	if len(h.dirs) > 0 {
		return h, nil
	}
	if !hasV2 || v2Mount == nil {
		return h, errors.New("no cgroup hierarchy with the memory or cpu controller is mounted")
	}
	dir, ok := below(v2Mount.point, v2Mount.root, v2Path)
	if !ok {
		return h, fmt.Errorf("this process's cgroup %s is outside the cgroup2 mount at %s", v2Path, v2Mount.point)
	}
	h.v2 = true
	h.dirs[""], h.points[""] = dir, v2Mount.point
	return h, nil
}

// below is the directory of cgroup path in a hierarchy mounted at point
// showing its directory root; ok is false when the mount does not show it.
func below(point, root, path string) (string, bool) {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return filepath.Join(point, rel), true
}

// unescapeMountinfo undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func detectCgroupHost() (cgroupHost, error) {
	procCgroup, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return cgroupHost{}, fmt.Errorf("this process's cgroups: %w", err)
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return cgroupHost{}, fmt.Errorf("this process's mounts: %w", err)
	}
	return parseCgroupHost(procCgroup, mountinfo)
}

// Tree is a runtime's cgroups, below knit dev's own as the kubelet's
// are below its kubepods: <own>/knit-<instance>/pod<uid>/<container>. The
// levels above a container keep the kernel's default weight, so replicas
// together compete with the rest of the machine as one process does, and
// a container's shares only divide its replica's CPU among its containers
// (a BestEffort container's 2 shares would starve it against knit dev and
// the user's editor if they were siblings).
type Tree struct {
	v2          bool
	own         map[string]string // controller → knit dev's own cgroup ("" in v2)
	points      map[string]string // controller → where its hierarchy is mounted
	roots       map[string]string // controller → <own>/knit-<instance>
	controllers []string          // those of cgroupControllers limits are written to
}

// OpenTree makes (or takes over, after a killed knit dev on the same
// state directory) the runtime's cgroup directory and removes what an
// earlier knit dev left in it. In v2 it first enables the memory and cpu
// controllers for knit dev's own cgroup's children, which v2 allows only
// once that cgroup holds no process: knit dev's processes (and any other
// in its cgroup: the shell it was started from, in a session scope) move
// to a leaf <own>/init beside the runtime's directory, as Docker-in-Docker
// moves its own; limits that cover <own> still cover them. shares is the
// tree's CPU weight among its siblings (Shares of the node's allocatable
// CPU, as the kubelet weighs kubepods). instance names the tree, so that
// knit devs on other state directories keep theirs.
func OpenTree(instance string, shares int64) (*Tree, error) {
	host, err := detectCgroupHost()
	if err != nil {
		return nil, err
	}
	t := &Tree{v2: host.v2, own: host.dirs, points: host.points, roots: map[string]string{}}
	name := "knit-" + instance
	if t.v2 {
		own := host.dirs[""]
		if t.controllers, err = delegate(own); err != nil {
			return nil, err
		}
		root := filepath.Join(own, name)
		if err := mkdirCgroup(root); err != nil {
			return nil, err
		}
		if err := enableControllers(root, t.controllers); err != nil {
			return nil, err
		}
		t.roots[""] = root
	} else {
		var errs []error
		for _, c := range cgroupControllers {
			own, ok := host.dirs[c]
			if !ok {
				continue
			}
			root := filepath.Join(own, name)
			if err := mkdirCgroup(root); err != nil {
				errs = append(errs, err)
				continue
			}
			t.roots[c] = root
			t.controllers = append(t.controllers, c)
		}
		if len(t.roots) == 0 {
			return nil, errors.Join(errs...)
		}
	}
	if err := t.weigh(shares); err != nil {
		return nil, err
	}
	return t, t.removeLeftovers()
}

// weigh gives the tree's root its CPU weight among its siblings.
func (t *Tree) weigh(shares int64) error {
	if t.v2 {
		if !slices.Contains(t.controllers, "cpu") {
			return nil
		}
		return writeCgroupFile(filepath.Join(t.roots[""], "cpu.weight"), strconv.FormatInt(sharesToWeight(shares), 10))
	}
	root, ok := t.roots["cpu"]
	if !ok {
		return nil
	}
	return writeCgroupFile(filepath.Join(root, "cpu.shares"), strconv.FormatInt(shares, 10))
}

// delegate enables the memory and cpu controllers in own's children and
// returns those it could enable: a controller own's parent does not give
// it cannot be had without changing cgroups that are not knit dev's.
func delegate(own string) ([]string, error) {
	avail, err := os.ReadFile(filepath.Join(own, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("cgroup controllers: %w", err)
	}
	var want []string
	for _, c := range cgroupControllers {
		if slices.Contains(strings.Fields(string(avail)), c) {
			want = append(want, c)
		}
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("knit dev's cgroup %s has neither the memory nor the cpu controller (it has %q)", own, strings.TrimSpace(string(avail)))
	}
	for attempt := 0; ; attempt++ {
		err := enableControllers(own, want)
		if !errors.Is(err, unix.EBUSY) || attempt == 5 {
			return want, err
		}
		// Processes in own: move them to a leaf, and try again (a
		// process may have forked into own meanwhile).
		leaf := filepath.Join(own, "init")
		if err := mkdirCgroup(leaf); err != nil {
			return nil, err
		}
		if err := moveProcesses(own, leaf); err != nil {
			return nil, fmt.Errorf("move knit dev's processes out of %s (cgroup v2 controls only a cgroup's children when it holds no process): %w", own, err)
		}
	}
}

func enableControllers(dir string, controllers []string) error {
	if len(controllers) == 0 {
		return nil
	}
	var b strings.Builder
	for _, c := range controllers {
		fmt.Fprintf(&b, "+%s ", c)
	}
	if err := writeCgroupFile(filepath.Join(dir, "cgroup.subtree_control"), strings.TrimSpace(b.String())); err != nil {
		return fmt.Errorf("enable %s for the children of cgroup %s: %w", strings.Join(controllers, " and "), dir, err)
	}
	return nil
}

func moveProcesses(from, to string) error {
	pids, err := cgroupProcs(from)
	if err != nil {
		return err
	}
	for _, pid := range pids {
		if err := writeCgroupFile(filepath.Join(to, "cgroup.procs"), strconv.Itoa(pid)); err != nil && !errors.Is(err, unix.ESRCH) {
			return err
		}
	}
	return nil
}

// removeLeftovers removes the pods a killed knit dev left, killing what
// still runs in them (knit dev's own orphan reaping found those carrying
// its marker; this finds the rest).
func (t *Tree) removeLeftovers() error {
	var errs []error
	for _, root := range t.roots {
		pods, err := os.ReadDir(root)
		if err != nil {
			return fmt.Errorf("cgroup %s: %w", root, err)
		}
		for _, p := range pods {
			if p.IsDir() && strings.HasPrefix(p.Name(), "pod") {
				errs = append(errs, removeCgroupTree(filepath.Join(root, p.Name())))
			}
		}
	}
	return errors.Join(errs...)
}

// Has reports whether limits of the controller ("memory", "cpu") are
// written: a controller knit dev's cgroup is not given goes unenforced.
func (t *Tree) Has(controller string) bool {
	return t != nil && slices.Contains(t.controllers, controller)
}

// Close removes the runtime's directories once every replica is gone.
func (t *Tree) Close() error {
	if t == nil {
		return nil
	}
	var errs []error
	for _, root := range t.roots {
		errs = append(errs, removeCgroupTree(root))
	}
	return errors.Join(errs...)
}

// Unified reports whether the tree is in cgroup v2's unified hierarchy,
// whose files are named otherwise (cpu.max, not cpu.cfs_quota_us).
func (t *Tree) Unified() bool { return t != nil && t.v2 }

// MountPoint is where the controller's hierarchy is mounted ("" for v2's
// unified one), which is where a container sees its own cgroup (View).
func (t *Tree) MountPoint(controller string) string {
	if t == nil {
		return ""
	}
	return t.points[controller]
}

// Pod is the cgroup of one replica, by its pod's UID, made with its first
// container's; nil for a nil tree (no cgroups).
func (t *Tree) Pod(uid string) *Pod {
	if t == nil {
		return nil
	}
	p := &Pod{tree: t, dirs: map[string]string{}}
	for c, root := range t.roots {
		p.dirs[c] = filepath.Join(root, "pod"+uid)
	}
	return p
}

// Pod is a replica's cgroup, per controller in v1: the containers' below
// it share its weight. Its methods are no-ops on nil.
type Pod struct {
	tree *Tree
	dirs map[string]string
}

// Container makes a container's cgroup with its limits (nil from a nil
// pod). v2's
// subtree_control is written on every call: idempotent, and the pod's
// directory may have just been made.
func (p *Pod) Container(name string, l Limits) (*Container, error) {
	if p == nil {
		return nil, nil
	}
	cg := &Container{v2: p.tree.v2, dirs: map[string]string{}, own: p.tree.own, points: p.tree.points, fd: -1, limits: l}
	for c, pod := range p.dirs {
		if err := mkdirCgroup(pod); err != nil {
			return nil, err
		}
		if p.tree.v2 {
			if err := enableControllers(pod, p.tree.controllers); err != nil {
				return nil, err
			}
		}
		dir := filepath.Join(pod, name)
		if err := mkdirCgroup(dir); err != nil {
			return nil, err
		}
		cg.dirs[c] = dir
	}
	files := l.v1Files()
	if cg.v2 {
		files = l.v2Files()
	}
	for _, f := range files {
		if !slices.Contains(p.tree.controllers, f.controller) {
			continue
		}
		dir := cg.dirs[f.controller]
		if cg.v2 {
			dir = cg.dirs[""]
		}
		err := writeCgroupFile(filepath.Join(dir, f.name), f.value)
		if err != nil && !(f.optional && errors.Is(err, fs.ErrNotExist)) {
			_ = cg.Remove()
			return nil, fmt.Errorf("set %s to %s: %w", f.name, f.value, err)
		}
	}
	if cg.v2 {
		fd, err := unix.Open(cg.dirs[""], unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			_ = cg.Remove()
			return nil, fmt.Errorf("open cgroup %s: %w", cg.dirs[""], err)
		}
		cg.fd = fd
		return cg, nil
	}
	cg.tasks = map[string][2]*os.File{}
	for c, dir := range cg.dirs {
		in, err := os.OpenFile(filepath.Join(dir, "tasks"), os.O_WRONLY, 0)
		if err != nil {
			_ = cg.Remove()
			return nil, err
		}
		out, err := os.OpenFile(filepath.Join(cg.own[c], "tasks"), os.O_WRONLY, 0)
		if err != nil {
			in.Close()
			_ = cg.Remove()
			return nil, err
		}
		cg.tasks[c] = [2]*os.File{in, out}
	}
	return cg, nil
}

// Dirs are the replica's cgroup directories by controller ("" for v2's
// unified hierarchy), where its containers' are, by name: for tools and
// tests that read what a replica was given.
func (p *Pod) Dirs() map[string]string {
	if p == nil {
		return nil
	}
	return maps.Clone(p.dirs)
}

// Remove removes the replica's cgroup once its containers' are gone,
// killing whatever is left in it.
func (p *Pod) Remove() error {
	if p == nil {
		return nil
	}
	var errs []error
	for _, dir := range p.dirs {
		errs = append(errs, removeCgroupTree(dir))
	}
	return errors.Join(errs...)
}

// Container is the cgroup a container's processes run in, across its
// restarts. Its methods are no-ops on nil (no cgroups).
type Container struct {
	v2     bool
	dirs   map[string]string // controller → directory ("" in v2)
	own    map[string]string // knit dev's own, where a v1 thread returns
	points map[string]string // where the hierarchies are mounted
	fd     int               // v2: the directory, for CLONE_INTO_CGROUP
	// v1: the tasks files of the cgroup and of knit dev's own, by
	// controller, opened beforehand: the forking thread may already be in
	// the container's mount namespace, where /sys/fs/cgroup is the view.
	tasks  map[string][2]*os.File
	limits Limits
}

// Enter arranges for cmd's process to be born in the cgroup, so that it
// is limited and charged from its first instruction. In v2 the kernel
// forks it there (CLONE_INTO_CGROUP). v1 has no such flag, but a cgroup
// v1 hierarchy takes single threads: the calling thread, locked to its
// goroutine, joins the cgroup for the fork and leaves it after, and the
// child inherits the cgroup of the thread that forked it. Until the child
// execs it shares knit dev's memory (vfork), charged to knit dev. leave
// reports stuck when the thread could not return: it must then die with
// its goroutine rather than run knit dev's work in a replica's cgroup.
// leave is called even when enter fails, to undo what it did.
func (cg *Container) Enter(cmd *exec.Cmd) (leave func() (stuck bool), err error) {
	if cg == nil {
		return func() bool { return false }, nil
	}
	if cg.v2 {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, cg.fd
		return func() bool { return false }, nil
	}
	// "0" is the writing thread itself. Naming it by its id instead makes
	// the kernel take the global threadgroup lock for writing, which waits
	// for an RCU grace period: ~4 ms a write here, 12 ms of every start.
	tid := []byte("0")
	var joined []string
	back := func() bool {
		stuck := false
		for _, c := range joined {
			if _, err := cg.tasks[c][1].Write(tid); err != nil {
				stuck = true
			}
		}
		return stuck
	}
	for c, files := range cg.tasks {
		if _, err := files[0].Write(tid); err != nil {
			return back, fmt.Errorf("enter cgroup %s: %w", cg.dirs[c], err)
		}
		joined = append(joined, c)
	}
	return back, nil
}

// View is how the container sees cgroups, as in a pod: its own cgroup,
// read-only, where each hierarchy is mounted (/sys/fs/cgroup/memory and
// /sys/fs/cgroup/cpu in v1, /sys/fs/cgroup in v2), so that an app reading
// its limits there (a JVM, Knative's runtime conformance image) reads its
// container's. Paths in /proc/self/cgroup stay knit dev's tree's: there is
// no cgroup namespace (mountinfo names the bound directory, which is what
// Go's and Java's runtimes look for). Sorted by target, parents first.
func (cg *Container) View() []Mount {
	if cg == nil {
		return nil
	}
	var ms []Mount
	for c, dir := range cg.dirs {
		if point := cg.points[c]; point != "" {
			ms = append(ms, Mount{Source: dir, Target: point})
		}
	}
	slices.SortFunc(ms, func(a, b Mount) int { return strings.Compare(a.Target, b.Target) })
	return ms
}

// Limits are the limits the cgroup was made with, which an OOM kill's
// message names.
func (cg *Container) Limits() Limits {
	if cg == nil {
		return Limits{}
	}
	return cg.limits
}

// Kill SIGKILLs every process left in the cgroup: when a container's
// main process has exited nothing it started survives it, even what left
// its process group. It runs on a goroutine of its own: the caller's
// thread may be in the container's mount namespace, where the cgroup's
// path is not the cgroup.
func (cg *Container) Kill() {
	if cg == nil {
		return
	}
	for _, dir := range cg.dirs {
		done := make(chan struct{})
		go func() {
			defer close(done)
			killCgroup(dir, cg.v2)
		}()
		<-done
		return // in v1 every hierarchy holds the same processes
	}
}

// OOMKills counts the container's processes the kernel killed for its
// memory limit, since the cgroup was made: a rise across a run means the
// run was OOMKilled. v2 counts a child's kills in its parents too; v1
// counts them only where the victim was, so the cgroups below (runc's,
// for an image's container) are added.
func (cg *Container) OOMKills() int64 {
	if cg == nil {
		return 0
	}
	if cg.v2 {
		n, _ := keyedValue(filepath.Join(cg.dirs[""], "memory.events"), "oom_kill")
		return n
	}
	var total int64
	_ = filepath.WalkDir(cg.dirs["memory"], func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			n, _ := keyedValue(filepath.Join(path, "memory.oom_control"), "oom_kill")
			total += n
		}
		return nil
	})
	return total
}

// Remove kills what is left in the cgroup and removes it.
func (cg *Container) Remove() error {
	if cg == nil {
		return nil
	}
	if cg.fd >= 0 {
		_ = unix.Close(cg.fd)
		cg.fd = -1
	}
	for _, files := range cg.tasks {
		files[0].Close()
		files[1].Close()
	}
	cg.tasks = nil
	var errs []error
	for _, dir := range cg.dirs {
		errs = append(errs, removeCgroupTree(dir))
	}
	return errors.Join(errs...)
}

// removeCgroupTree removes a cgroup and those below it, killing their
// processes first.
func removeCgroupTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove cgroup %s: %w", dir, err)
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			errs = append(errs, removeCgroupTree(filepath.Join(dir, e.Name())))
		}
	}
	_, statErr := os.Stat(filepath.Join(dir, "cgroup.controllers"))
	killCgroup(dir, statErr == nil)
	deadline := time.Now().Add(emptyTimeout)
	for {
		err := unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			break
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dir, err))
			break
		}
		time.Sleep(5 * time.Millisecond) // the killed are being reaped
	}
	return errors.Join(errs...)
}

// killCgroup SIGKILLs the processes in a cgroup: at once through
// cgroup.kill (v2, Linux 5.14), else one by one, again until none is left
// that was not already killed (one may fork meanwhile).
func killCgroup(dir string, v2 bool) {
	if v2 && writeCgroupFile(filepath.Join(dir, "cgroup.kill"), "1") == nil {
		return
	}
	killed := map[int]bool{}
	for range 100 {
		pids, err := cgroupProcs(dir)
		if err != nil {
			return
		}
		fresh := 0
		for _, pid := range pids {
			if !killed[pid] {
				killed[pid] = true
				fresh++
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
		if fresh == 0 {
			return
		}
	}
}

func cgroupProcs(dir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for f := range strings.FieldsSeq(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// keyedValue reads "key value" lines (memory.events, memory.oom_control).
func keyedValue(file, key string) (int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), " "); ok && k == key {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no %s", file, key)
}

func mkdirCgroup(dir string) error {
	if err := unix.Mkdir(dir, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("make cgroup %s: %w", dir, err)
	}
	return nil
}

// writeCgroupFile writes a value in one write, as cgroup files want:
// without O_CREATE or O_TRUNC, which some of them refuse.
func writeCgroupFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	return errors.Join(err, f.Close())
}
