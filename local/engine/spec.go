package engine

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Mount is a bind mount of a host path into the container.
type Mount struct {
	Source, Destination string
	ReadOnly            bool
}

// Seccomp selects the container's seccomp profile.
type Seccomp int

const (
	// SeccompRuntimeDefault is Kubernetes' RuntimeDefault: the moby default
	// profile, filtered by the container's capabilities.
	SeccompRuntimeDefault Seccomp = iota
	// SeccompUnconfined installs no filter.
	SeccompUnconfined
)

// Config is one container's resolved settings.
type Config struct {
	Args           []string // argv, already resolved (Kubernetes command/args rules applied by caller)
	Env            []string // KEY=VALUE
	Cwd            string   // absolute; "" → "/"
	UID, GID       uint32
	AdditionalGIDs []uint32
	// Hostname is set in the container's UTS namespace and as $HOSTNAME,
	// as the CRI plugin does; "" leaves the host's name (the new UTS
	// namespace starts as a copy), which no Kubernetes pod ever sees.
	Hostname string
	// Mounts are volumes, /etc/hosts, /etc/resolv.conf etc. The caller orders
	// parents first; Spec additionally sorts them stably by depth like
	// containerd so a parent can never shadow a child.
	Mounts          []Mount
	ReadOnlyRoot    bool
	NoNewPrivileges bool
	// CapAdd and CapDrop use Kubernetes spelling: "NET_ADMIN" or
	// "CAP_NET_ADMIN"; "ALL" in drop drops all (then adds apply), "ALL" in
	// add adds all.
	CapAdd, CapDrop []string
	Privileged      bool
	Seccomp         Seccomp // ignored when Privileged: no filter, as containerd
	CgroupsPath     string  // passed through to linux.cgroupsPath (caller uses a relative path)
	// Sysctls go to linux.sysctl. Only namespaced, non-network sysctls
	// (kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*) are accepted: see
	// Spec for why net.* cannot work here.
	Sysctls map[string]string
	// Memory, CPUQuota and CPUShares are the container's limits, as the
	// kubelet's CRI request carries them (0: none). runc writes them on
	// the container's own cgroup, the one the app sees at /sys/fs/cgroup
	// and reads its limits from (a JVM sizes its heap by it); the caller
	// may bound a cgroup above it too.
	Memory    int64  // bytes
	CPUQuota  int64  // microseconds per CPUPeriod
	CPUPeriod uint64 // microseconds
	CPUShares uint64
}

// defaultPath is containerd's default PATH (pkg/oci defaultUnixEnv), set
// when the image and pod do not set one.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// maskedPaths and readonlyPaths are what kubelet sends for the Default
// procMount (k8s.io/kubernetes/pkg/securitycontext). containerd's CRI plugin
// clears its own pkg/oci defaults and uses exactly these, so this is what a
// Kubernetes container gets.
func maskedPaths() []string {
	return []string{
		"/proc/asound",
		"/proc/acpi",
		"/proc/kcore",
		"/proc/keys",
		"/proc/latency_stats",
		"/proc/timer_list",
		"/proc/timer_stats",
		"/proc/sched_debug",
		"/proc/scsi",
		"/sys/firmware",
		"/sys/devices/virtual/powercap",
	}
}

func readonlyPaths() []string {
	return []string{
		"/proc/bus",
		"/proc/fs",
		"/proc/irq",
		"/proc/sys",
		"/proc/sysrq-trigger",
	}
}

// defaultMounts is containerd's pkg/oci defaultMounts without /run (the CRI
// plugin applies WithoutRunMount) plus the /sys/fs/cgroup mount the CRI
// plugin adds. Privileged containers get /sys and /sys/fs/cgroup writable
// (WithWriteableSysfs, WithWriteableCgroupfs).
func defaultMounts(privileged bool) []specs.Mount {
	sysMode := "ro"
	if privileged {
		sysMode = "rw"
	}
	cgroupOpts := append([]string{"nosuid", "noexec", "nodev", "relatime", sysMode}, hostCgroup2Opts()...)
	return []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}},
		{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
		{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", sysMode}},
		{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: cgroupOpts},
	}
}

// hostCgroup2Opts returns nsdelegate/memory_recursiveprot when the host's
// /sys/fs/cgroup is cgroup2. Without a cgroup namespace a cgroup2 mount in
// the container shares the host's superblock, and mounting it without these
// options would clear them on the host; containerd copies them for the same
// reason. On cgroup v1 and hybrid hosts (such as the one knit dev targets
// today) this returns nothing.
var hostCgroup2Opts = sync.OnceValue(func() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 || pf[4] != "/sys/fs/cgroup" || qf[0] != "cgroup2" {
			continue
		}
		var opts []string
		for o := range strings.SplitSeq(qf[2], ",") {
			if o == "nsdelegate" || o == "memory_recursiveprot" {
				opts = append(opts, o)
			}
		}
		return opts
	}
	return nil
})

// Spec is the OCI runtime spec for c, root filesystem at rootfs ("rootfs"
// relative to the bundle is fine). It follows what containerd's CRI plugin
// generates for a Kubernetes container, with these deliberate differences:
//
//   - No network namespace: the caller starts runc inside the pod's network
//     namespace and the container inherits it (so all containers of a pod
//     share it, as in Kubernetes). A consequence is that runc 1.1 refuses
//     net.* sysctls ("not allowed in host network namespace") because it
//     cannot tell the pod's namespace from the host's; Spec rejects them
//     up front and the caller must set them on the pod's namespace itself
//     (in Kubernetes they are pod-level and applied to the sandbox anyway).
//   - No cgroup namespace, even on cgroup v2: containerd only adds one on
//     cgroup v2, and with runc 1.1 on the cgroup v1 / hybrid hosts knit dev
//     runs on it would only add a code path that is rarely exercised. The
//     container sees its own cgroups bind-mounted read-only instead.
//   - No rlimits: the CRI plugin removes containerd's default
//     RLIMIT_NOFILE=1024 (WithoutDefaultSecuritySettings), so the container
//     inherits the limits of the runc process, i.e. of knit.
//   - No AppArmor/SELinux labels, no OOM score.
//   - No host devices for privileged containers (containerd adds every
//     host device unless privileged_without_host_devices); the device
//     cgroup does allow everything, as containerd's WithAllDevicesAllowed.
func Spec(rootfs string, c Config) (*specs.Spec, error) {
	if len(c.Args) == 0 {
		return nil, errors.New("no command: args is empty")
	}
	cwd := c.Cwd
	if cwd == "" {
		cwd = "/"
	}
	if !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("working directory %q is not absolute", c.Cwd)
	}
	caps, err := capabilities(c)
	if err != nil {
		return nil, err
	}
	mounts, err := mountsFor(c)
	if err != nil {
		return nil, err
	}
	for k := range c.Sysctls {
		if n := strings.ReplaceAll(k, "/", "."); strings.HasPrefix(n, "net.") {
			return nil, fmt.Errorf("sysctl %q: network sysctls must be set on the pod's network namespace by the caller; the container shares it and runc rejects them", k)
		}
	}

	env := []string{defaultPath}
	if c.Hostname != "" {
		// containerd's CRI plugin sets HOSTNAME before the image and pod
		// environment, so either can override it.
		env = replaceOrAppendEnv(env, []string{"HOSTNAME=" + c.Hostname})
	}
	env = replaceOrAppendEnv(env, c.Env)

	s := &specs.Spec{
		Version: specs.Version,
		Process: &specs.Process{
			Terminal: false,
			User: specs.User{
				UID:            c.UID,
				GID:            c.GID,
				AdditionalGids: slices.Clone(c.AdditionalGIDs),
			},
			Args:            slices.Clone(c.Args),
			Env:             env,
			Cwd:             cwd,
			NoNewPrivileges: c.NoNewPrivileges,
			// Always non-nil, even when every capability is dropped: runc
			// leaves the capabilities untouched (i.e. all of runc's) when
			// the field is absent. Inheritable and ambient stay empty, as
			// containerd ≥1.6 (CVE-2022-24769) and WithoutAmbientCaps do.
			Capabilities: &specs.LinuxCapabilities{
				Bounding:  slices.Clone(caps),
				Effective: slices.Clone(caps),
				Permitted: slices.Clone(caps),
			},
		},
		Root:     &specs.Root{Path: rootfs, Readonly: c.ReadOnlyRoot},
		Hostname: c.Hostname,
		Mounts:   mounts,
		Linux: &specs.Linux{
			CgroupsPath: c.CgroupsPath,
			Sysctl:      maps.Clone(c.Sysctls),
			// pid, ipc, uts, mount: see the doc comment for network and
			// cgroup.
			Namespaces: []specs.LinuxNamespace{
				{Type: specs.PIDNamespace},
				{Type: specs.IPCNamespace},
				{Type: specs.UTSNamespace},
				{Type: specs.MountNamespace},
			},
			// Deny everything, as containerd's default spec does; runc 1.1
			// then always appends its own allow list (null, zero, full,
			// random, urandom, tty, /dev/pts/*, ptmx, net/tun, mknod) and
			// creates those nodes, so nothing more is needed here.
			Resources: &specs.LinuxResources{
				Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
			},
			MaskedPaths:   maskedPaths(),
			ReadonlyPaths: readonlyPaths(),
		},
	}
	setLimits(s.Linux.Resources, c)

	if c.Privileged {
		s.Linux.MaskedPaths = nil
		s.Linux.ReadonlyPaths = nil
		s.Linux.Resources.Devices = []specs.LinuxDeviceCgroup{{Allow: true, Access: "rwm"}}
		return s, nil
	}
	if c.Seccomp == SeccompRuntimeDefault {
		// The profile depends on the bounding set (e.g. CAP_SYS_ADMIN
		// unlocks mount, unshare...), so it is computed after the
		// capabilities are final.
		prof, err := defaultSeccomp(s)
		if err != nil {
			return nil, fmt.Errorf("seccomp default profile: %w", err)
		}
		s.Linux.Seccomp = prof
	}
	return s, nil
}

// mountsFor is the default mounts, minus those a caller mount replaces (and
// everything under /dev when the caller mounts /dev), followed by the caller
// mounts as private recursive binds, as containerd's CRI WithMounts.
func mountsFor(c Config) ([]specs.Mount, error) {
	user := slices.Clone(c.Mounts)
	dsts := map[string]bool{}
	for i := range user {
		m := &user[i]
		if !filepath.IsAbs(m.Destination) {
			return nil, fmt.Errorf("mount destination %q is not absolute", m.Destination)
		}
		if !filepath.IsAbs(m.Source) {
			return nil, fmt.Errorf("mount source %q for %q is not absolute", m.Source, m.Destination)
		}
		m.Destination = filepath.Clean(m.Destination)
		dsts[m.Destination] = true
	}
	// Sort by depth so a parent never shadows a child; stable, so the
	// caller's order is kept among equals.
	sort.SliceStable(user, func(i, j int) bool {
		return depth(user[i].Destination) < depth(user[j].Destination)
	})

	var out []specs.Mount
	for _, m := range defaultMounts(c.Privileged) {
		if dsts[m.Destination] || (dsts["/dev"] && strings.HasPrefix(m.Destination, "/dev/")) {
			continue
		}
		out = append(out, m)
	}
	for _, m := range user {
		mode := "rw"
		if m.ReadOnly {
			mode = "ro"
		}
		out = append(out, specs.Mount{
			Destination: m.Destination,
			Type:        "bind",
			Source:      m.Source,
			Options:     []string{"rbind", "rprivate", mode},
		})
	}
	return out, nil
}

func depth(p string) int { return len(strings.Split(p, "/")) }

// replaceOrAppendEnv is containerd's replaceOrAppendEnvValues: an override
// replaces a default with the same key, "KEY" without "=" unsets it, other
// overrides are appended in order.
func replaceOrAppendEnv(defaults, overrides []string) []string {
	idx := make(map[string]int, len(defaults))
	out := make([]string, 0, len(defaults)+len(overrides))
	for i, e := range defaults {
		k, _, _ := strings.Cut(e, "=")
		out = append(out, e)
		idx[k] = i
	}
	for _, e := range overrides {
		k, _, ok := strings.Cut(e, "=")
		i, exists := idx[k]
		switch {
		case !ok && exists:
			out[i] = ""
		case !ok:
		case exists:
			out[i] = e
		default:
			out = append(out, e)
		}
	}
	return slices.DeleteFunc(out, func(e string) bool { return e == "" })
}

// setLimits puts c's memory and CPU limits in r, as containerd's CRI
// plugin does: a memory limit with no swap beyond it, a CFS quota and
// shares.
func setLimits(r *specs.LinuxResources, c Config) {
	if c.Memory > 0 {
		r.Memory = &specs.LinuxMemory{Limit: &c.Memory, Swap: &c.Memory}
	}
	if c.CPUQuota > 0 || c.CPUShares > 0 {
		r.CPU = &specs.LinuxCPU{}
		if c.CPUQuota > 0 {
			r.CPU.Quota, r.CPU.Period = &c.CPUQuota, &c.CPUPeriod
		}
		if c.CPUShares > 0 {
			r.CPU.Shares = &c.CPUShares
		}
	}
}
