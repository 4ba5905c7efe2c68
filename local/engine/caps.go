package engine

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// knownCaps lists every capability name by its number (index), up to
// CAP_CHECKPOINT_RESTORE (Linux 5.9), the same table containerd's pkg/cap
// uses. It serves two purposes: validating the names a pod spec asks for
// (runc 1.1 only warns about unknown names and ignores them, which would turn
// a typo in a pod spec into a silently weaker or stronger container), and
// decoding the CapEff bitmap of the current process for "ALL".
var knownCaps = []string{
	"CAP_CHOWN",
	"CAP_DAC_OVERRIDE",
	"CAP_DAC_READ_SEARCH",
	"CAP_FOWNER",
	"CAP_FSETID",
	"CAP_KILL",
	"CAP_SETGID",
	"CAP_SETUID",
	"CAP_SETPCAP",
	"CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE",
	"CAP_NET_BROADCAST",
	"CAP_NET_ADMIN",
	"CAP_NET_RAW",
	"CAP_IPC_LOCK",
	"CAP_IPC_OWNER",
	"CAP_SYS_MODULE",
	"CAP_SYS_RAWIO",
	"CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE",
	"CAP_SYS_PACCT",
	"CAP_SYS_ADMIN",
	"CAP_SYS_BOOT",
	"CAP_SYS_NICE",
	"CAP_SYS_RESOURCE",
	"CAP_SYS_TIME",
	"CAP_SYS_TTY_CONFIG",
	"CAP_MKNOD",
	"CAP_LEASE",
	"CAP_AUDIT_WRITE",
	"CAP_AUDIT_CONTROL",
	"CAP_SETFCAP",
	"CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN",
	"CAP_SYSLOG",
	"CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND",
	"CAP_AUDIT_READ",
	"CAP_PERFMON",
	"CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
}

// DefaultCaps is the capability set containerd gives a non-privileged
// container (pkg/oci defaultUnixCaps), which the CRI plugin keeps and then
// adjusts with the pod's securityContext.capabilities.
func DefaultCaps() []string {
	return []string{
		"CAP_CHOWN",
		"CAP_DAC_OVERRIDE",
		"CAP_FSETID",
		"CAP_FOWNER",
		"CAP_MKNOD",
		"CAP_NET_RAW",
		"CAP_SETGID",
		"CAP_SETUID",
		"CAP_SETFCAP",
		"CAP_SETPCAP",
		"CAP_NET_BIND_SERVICE",
		"CAP_SYS_CHROOT",
		"CAP_KILL",
		"CAP_AUDIT_WRITE",
	}
}

// normalizeCap turns a Kubernetes capability name ("NET_ADMIN",
// "CAP_NET_ADMIN", any case) into the OCI spelling ("CAP_NET_ADMIN").
// containerd blindly prefixes "CAP_"; accepting both spellings and rejecting
// unknown names is stricter, on purpose (see knownCaps).
func normalizeCap(name string) (string, error) {
	n := strings.ToUpper(strings.TrimSpace(name))
	if !strings.HasPrefix(n, "CAP_") {
		n = "CAP_" + n
	}
	if !slices.Contains(knownCaps, n) {
		return "", fmt.Errorf("unknown capability %q", name)
	}
	return n, nil
}

func isAll(name string) bool { return strings.EqualFold(strings.TrimSpace(name), "ALL") }

// CurrentCaps returns the effective capabilities of this process, which is
// what "ALL" and privileged mean: containerd uses the same
// (pkg/cap.Current). Asking for a capability the caller does not hold would
// make runc fail to set it (on this kind of host, for example, the VM drops
// CAP_SYS_RESOURCE from everything).
func CurrentCaps() []string {
	return slices.Clone(currentCaps())
}

var currentCaps = sync.OnceValue(func() []string {
	caps, err := readCapEff("/proc/self/status")
	if err != nil {
		// Without /proc there is no way to know; the full table is the
		// best guess and runc reports clearly if it is wrong.
		return slices.Clone(knownCaps)
	}
	return caps
})

func readCapEff(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != "CapEff" {
			continue
		}
		bits, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("parse CapEff %q: %w", v, err)
		}
		return capsFromBitmap(bits), nil
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("no CapEff line in %s", path)
}

// capsFromBitmap decodes a capability bitmap; bits beyond knownCaps (a newer
// kernel than this table) are ignored, as containerd does.
func capsFromBitmap(bits uint64) []string {
	var caps []string
	for i, name := range knownCaps {
		if bits&(1<<uint(i)) != 0 {
			caps = append(caps, name)
		}
	}
	return caps
}

// capabilities applies add/drop the way containerd's CRI WithCapabilities
// does: "ALL" in add starts from all current capabilities, "ALL" in drop then
// empties the set, then the individual adds are appended and finally the
// individual drops removed (so a name in both add and drop ends up dropped).
// Privileged containers get all current capabilities regardless of add/drop,
// as with containerd's WithPrivileged, which runs after WithCapabilities.
func capabilities(c Config) ([]string, error) {
	var adds, drops []string
	var addAll, dropAll bool
	for _, n := range c.CapAdd {
		if isAll(n) {
			addAll = true
			continue
		}
		cp, err := normalizeCap(n)
		if err != nil {
			return nil, fmt.Errorf("capabilities.add: %w", err)
		}
		adds = append(adds, cp)
	}
	for _, n := range c.CapDrop {
		if isAll(n) {
			dropAll = true
			continue
		}
		cp, err := normalizeCap(n)
		if err != nil {
			return nil, fmt.Errorf("capabilities.drop: %w", err)
		}
		drops = append(drops, cp)
	}
	if c.Privileged {
		return CurrentCaps(), nil
	}
	caps := DefaultCaps()
	if addAll {
		caps = CurrentCaps()
	}
	if dropAll {
		caps = nil
	}
	for _, a := range adds {
		if !slices.Contains(caps, a) {
			caps = append(caps, a)
		}
	}
	caps = slices.DeleteFunc(caps, func(s string) bool { return slices.Contains(drops, s) })
	return caps, nil
}

// Capabilities is the capability set a container of c gets, as
// containerd's CRI plugin computes it: DefaultCaps adjusted by c's adds
// and drops, or every capability this process holds when privileged.
// knit dev's own processes (ko:// and knit:// images) are bounded by it
// too, so a securityContext means the same whichever way a container runs.
func Capabilities(c Config) ([]string, error) { return capabilities(c) }

// CapabilityNumbers are the kernel's numbers of the named capabilities
// (OCI spelling, as Capabilities returns them); names it does not know
// are left out.
func CapabilityNumbers(names []string) []int {
	var nums []int
	for _, n := range names {
		if i := slices.Index(knownCaps, n); i >= 0 {
			nums = append(nums, i)
		}
	}
	return nums
}
