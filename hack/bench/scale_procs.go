package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// proc is one process of knit dev's tree.
type proc struct {
	pid  int
	name string // /proc/<pid>/comm: knit, kube-apiserver, etcd, knit-queue, an app's binary
	exe  string // the executable's path
}

// processTree is root and every process below it, root first, each with
// its command name. Processes that end while it reads are left out.
func processTree(root int) []proc {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []proc
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		comm, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
		if err != nil {
			continue
		}
		exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
		out = append(out, proc{pid: pid, name: strings.TrimSpace(string(comm)), exe: exe})
		kids := children[pid]
		slices.Sort(kids)
		queue = append(queue, kids...)
	}
	return out
}

// parentOf reads field 4 of /proc/<pid>/stat.
func parentOf(pid int) (int, bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0, false
	}
	f := bytes.Fields(data[end+1:]) // f[0] is field 3, the state
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}

// ownProcess reports whether p is knit dev's own (knit, and the etcd,
// kube-apiserver and kube-controller-manager it runs from its bin dir),
// not a replica's (an app or its knit-queue).
func (s devSpec) ownProcess(p proc) bool {
	if p.exe == s.knit {
		return true
	}
	for _, tool := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		// ./bin links to the tools cache: the process runs the link's target.
		if target, err := filepath.EvalSymlinks(filepath.Join(s.binDir, tool)); err == nil && target == p.exe {
			return true
		}
	}
	return false
}

// replicaCount is how many processes of tree belong to replicas.
func (s devSpec) replicaCount(tree []proc) int {
	n := 0
	for _, p := range tree {
		if !s.ownProcess(p) {
			n++
		}
	}
	return n
}

// describeReplicas names the replica processes of tree.
func (s devSpec) describeReplicas(tree []proc) string {
	var names []string
	for _, p := range tree {
		if !s.ownProcess(p) {
			names = append(names, fmt.Sprintf("%s (%d, %s)", p.name, p.pid, p.exe))
		}
	}
	return strings.Join(names, ", ")
}

// procUsage is what one process used over a window.
type procUsage struct {
	proc
	cpu time.Duration // CPU time (user + system) used in the window
	mem memUsage      // at the window's end
}

// share is the process's CPU over the window as a fraction of one core.
func (u procUsage) share(window time.Duration) float64 {
	return float64(u.cpu) / float64(window)
}

// cpuSnapshot is the CPU time each of some processes used so far.
type cpuSnapshot struct {
	procs []proc
	cpu   []time.Duration
}

func snapshotCPU(procs []proc) (cpuSnapshot, error) {
	s := cpuSnapshot{procs: procs, cpu: make([]time.Duration, len(procs))}
	for i, p := range procs {
		cpu, err := readCPU(p.pid)
		if err != nil {
			return s, fmt.Errorf("%s (%d): %w", p.name, p.pid, err)
		}
		s.cpu[i] = cpu
	}
	return s, nil
}

// since is what the snapshot's processes used after it, and their memory
// now.
func (s cpuSnapshot) since() ([]procUsage, error) {
	out := make([]procUsage, len(s.procs))
	for i, p := range s.procs {
		cpu, err := readCPU(p.pid)
		if err != nil {
			return nil, fmt.Errorf("%s (%d): %w", p.name, p.pid, err)
		}
		mem, err := readMemUsage(p.pid)
		if err != nil {
			return nil, fmt.Errorf("%s (%d): %w", p.name, p.pid, err)
		}
		out[i] = procUsage{proc: p, cpu: cpu - s.cpu[i], mem: mem}
	}
	return out, nil
}

// measureUsage is what procs use over window.
func measureUsage(ctx context.Context, procs []proc, window time.Duration) ([]procUsage, error) {
	s, err := snapshotCPU(procs)
	if err != nil {
		return nil, err
	}
	if err := sleep(ctx, window); err != nil {
		return nil, err
	}
	return s.since()
}

// controlPlane is the processes of tree that are knit dev's own.
func (s devSpec) controlPlane(tree []proc) []proc {
	var out []proc
	for _, p := range tree {
		if s.ownProcess(p) {
			out = append(out, p)
		}
	}
	return out
}

// memoryOf sums the resident memory of the processes of tree named name,
// and their proportional set size, and counts them.
func memoryOf(tree []proc, name string) (total memUsage, pss uint64, n int) {
	for _, p := range tree {
		if p.name != name {
			continue
		}
		m, err := readMemUsage(p.pid)
		if err != nil {
			continue // gone meanwhile
		}
		total.rss += m.rss
		total.anon += m.anon
		total.file += m.file
		if v, err := readPSS(p.pid); err == nil {
			pss += v
		}
		n++
	}
	return total, pss, n
}
