package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func base() Config {
	return Config{Args: []string{"/app"}, CgroupsPath: "knit/pod/c"}
}

func with(f func(*Config)) Config {
	c := base()
	f(&c)
	return c
}

func without(caps []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(caps), func(s string) bool { return slices.Contains(drop, s) })
}

func mountAt(s *specs.Spec, dst string) []specs.Mount {
	var out []specs.Mount
	for _, m := range s.Mounts {
		if m.Destination == dst {
			out = append(out, m)
		}
	}
	return out
}

func TestSpecCapabilities(t *testing.T) {
	tests := []struct {
		name      string
		add, drop []string
		priv      bool
		want      []string
	}{
		{name: "default", want: DefaultCaps()},
		{name: "drop ALL add NET_BIND_SERVICE", drop: []string{"ALL"}, add: []string{"NET_BIND_SERVICE"}, want: []string{"CAP_NET_BIND_SERVICE"}},
		{name: "drop all lower case", drop: []string{"all"}, want: nil},
		{name: "drop NET_RAW", drop: []string{"NET_RAW"}, want: without(DefaultCaps(), "CAP_NET_RAW")},
		{name: "drop CAP_ spelling", drop: []string{"CAP_NET_RAW", "cap_chown"}, want: without(DefaultCaps(), "CAP_NET_RAW", "CAP_CHOWN")},
		{name: "add NET_ADMIN", add: []string{"NET_ADMIN"}, want: append(DefaultCaps(), "CAP_NET_ADMIN")},
		{name: "add existing is not duplicated", add: []string{"CHOWN"}, want: DefaultCaps()},
		{name: "add and drop same drops", add: []string{"NET_ADMIN"}, drop: []string{"NET_ADMIN"}, want: DefaultCaps()},
		{name: "add ALL", add: []string{"ALL"}, want: CurrentCaps()},
		{name: "add ALL drop CHOWN", add: []string{"ALL"}, drop: []string{"CHOWN"}, want: without(CurrentCaps(), "CAP_CHOWN")},
		{name: "add ALL drop ALL", add: []string{"ALL"}, drop: []string{"ALL"}, want: nil},
		{name: "privileged ignores drop", priv: true, drop: []string{"ALL"}, want: CurrentCaps()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Spec("rootfs", with(func(c *Config) { c.CapAdd, c.CapDrop, c.Privileged = tt.add, tt.drop, tt.priv }))
			if err != nil {
				t.Fatal(err)
			}
			got := s.Process.Capabilities
			if got == nil {
				t.Fatal("capabilities must never be nil: runc would keep all of its own")
			}
			for set, caps := range map[string][]string{"bounding": got.Bounding, "effective": got.Effective, "permitted": got.Permitted} {
				if diff := cmp.Diff(tt.want, caps, cmp.Comparer(func(a, b []string) bool {
					return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
				})); diff != "" {
					t.Errorf("%s (-want +got):\n%s", set, diff)
				}
			}
			if len(got.Inheritable) != 0 || len(got.Ambient) != 0 {
				t.Errorf("inheritable %v ambient %v, want both empty", got.Inheritable, got.Ambient)
			}
		})
	}
}

func TestSpecErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"unknown cap add", with(func(c *Config) { c.CapAdd = []string{"NET_ADMN"} }), `unknown capability "NET_ADMN"`},
		{"unknown cap drop", with(func(c *Config) { c.CapDrop = []string{"CAP_FOO"} }), `unknown capability "CAP_FOO"`},
		{"unknown cap privileged", with(func(c *Config) { c.Privileged = true; c.CapAdd = []string{"FOO"} }), "unknown capability"},
		{"no args", with(func(c *Config) { c.Args = nil }), "args is empty"},
		{"relative cwd", with(func(c *Config) { c.Cwd = "work" }), "not absolute"},
		{"relative mount destination", with(func(c *Config) { c.Mounts = []Mount{{Source: "/x", Destination: "data"}} }), "not absolute"},
		{"relative mount source", with(func(c *Config) { c.Mounts = []Mount{{Source: "x", Destination: "/data"}} }), "not absolute"},
		{"net sysctl", with(func(c *Config) { c.Sysctls = map[string]string{"net.ipv4.ip_unprivileged_port_start": "0"} }), "network namespace"},
		{"net sysctl slashes", with(func(c *Config) { c.Sysctls = map[string]string{"net/core/somaxconn": "1024"} }), "network namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Spec("rootfs", tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestSpecProcess(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		check func(t *testing.T, s *specs.Spec)
	}{
		{"defaults", base(), func(t *testing.T, s *specs.Spec) {
			p := s.Process
			if s.Version != specs.Version || p.Terminal || p.Cwd != "/" || p.NoNewPrivileges || p.Rlimits != nil {
				t.Errorf("version %q terminal %v cwd %q nnp %v rlimits %v", s.Version, p.Terminal, p.Cwd, p.NoNewPrivileges, p.Rlimits)
			}
			if p.User.UID != 0 || p.User.GID != 0 || len(p.User.AdditionalGids) != 0 {
				t.Errorf("user %+v, want root", p.User)
			}
			if diff := cmp.Diff([]string{defaultPath}, p.Env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			if s.Root.Path != "rootfs" || s.Root.Readonly {
				t.Errorf("root %+v", s.Root)
			}
			if s.Linux.CgroupsPath != "knit/pod/c" {
				t.Errorf("cgroupsPath %q", s.Linux.CgroupsPath)
			}
		}},
		{"user and groups", with(func(c *Config) { c.UID, c.GID, c.AdditionalGIDs = 1000, 2000, []uint32{3000, 4000} }), func(t *testing.T, s *specs.Spec) {
			want := specs.User{UID: 1000, GID: 2000, AdditionalGids: []uint32{3000, 4000}}
			if diff := cmp.Diff(want, s.Process.User); diff != "" {
				t.Errorf("user (-want +got):\n%s", diff)
			}
		}},
		{"cwd args env hostname", with(func(c *Config) {
			c.Cwd, c.Args, c.Hostname = "/work", []string{"/bin/sh", "-c", "true"}, "web-0"
			c.Env = []string{"A=1", "PATH=/bin", "HOSTNAME=override"}
		}), func(t *testing.T, s *specs.Spec) {
			if s.Process.Cwd != "/work" || s.Hostname != "web-0" || !slices.Equal(s.Process.Args, []string{"/bin/sh", "-c", "true"}) {
				t.Errorf("cwd %q hostname %q args %q", s.Process.Cwd, s.Hostname, s.Process.Args)
			}
			if diff := cmp.Diff([]string{"PATH=/bin", "HOSTNAME=override", "A=1"}, s.Process.Env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		}},
		{"hostname env added", with(func(c *Config) { c.Hostname = "web-0" }), func(t *testing.T, s *specs.Spec) {
			if diff := cmp.Diff([]string{defaultPath, "HOSTNAME=web-0"}, s.Process.Env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		}},
		{"read-only root", with(func(c *Config) { c.ReadOnlyRoot = true }), func(t *testing.T, s *specs.Spec) {
			if !s.Root.Readonly {
				t.Error("root not read-only")
			}
		}},
		{"no new privileges", with(func(c *Config) { c.NoNewPrivileges = true }), func(t *testing.T, s *specs.Spec) {
			if !s.Process.NoNewPrivileges {
				t.Error("noNewPrivileges false")
			}
		}},
		{"sysctls", with(func(c *Config) { c.Sysctls = map[string]string{"kernel.shm_rmid_forced": "1"} }), func(t *testing.T, s *specs.Spec) {
			if s.Linux.Sysctl["kernel.shm_rmid_forced"] != "1" {
				t.Errorf("sysctl %v", s.Linux.Sysctl)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Spec("rootfs", tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
}

func TestSpecNamespaces(t *testing.T) {
	s, err := Spec("rootfs", base())
	if err != nil {
		t.Fatal(err)
	}
	var got []specs.LinuxNamespaceType
	for _, ns := range s.Linux.Namespaces {
		if ns.Path != "" {
			t.Errorf("namespace %s has path %q", ns.Type, ns.Path)
		}
		got = append(got, ns.Type)
	}
	want := []specs.LinuxNamespaceType{specs.PIDNamespace, specs.IPCNamespace, specs.UTSNamespace, specs.MountNamespace}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("namespaces (-want +got):\n%s", diff)
	}
}

func TestSpecSecurity(t *testing.T) {
	tests := []struct {
		name                   string
		cfg                    Config
		seccomp, masked, sysRW bool
		devicesAllowAll        bool
	}{
		{name: "default", cfg: base(), seccomp: true, masked: true},
		{name: "unconfined", cfg: with(func(c *Config) { c.Seccomp = SeccompUnconfined }), masked: true},
		{name: "privileged", cfg: with(func(c *Config) { c.Privileged = true }), sysRW: true, devicesAllowAll: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Spec("rootfs", tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Linux.Seccomp != nil; got != tt.seccomp {
				t.Errorf("seccomp set = %v, want %v", got, tt.seccomp)
			}
			if sc := s.Linux.Seccomp; sc != nil {
				if sc.DefaultAction != specs.ActErrno || len(sc.Syscalls) == 0 || !slices.Contains(sc.Architectures, specs.ArchX86_64) && !slices.Contains(sc.Architectures, specs.ArchAARCH64) {
					t.Errorf("seccomp default action %q, %d rules, arches %v", sc.DefaultAction, len(sc.Syscalls), sc.Architectures)
				}
			}
			if tt.masked {
				if diff := cmp.Diff(maskedPaths(), s.Linux.MaskedPaths); diff != "" {
					t.Errorf("masked (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(readonlyPaths(), s.Linux.ReadonlyPaths); diff != "" {
					t.Errorf("readonly (-want +got):\n%s", diff)
				}
			} else if len(s.Linux.MaskedPaths)+len(s.Linux.ReadonlyPaths) != 0 {
				t.Errorf("masked %v readonly %v, want none", s.Linux.MaskedPaths, s.Linux.ReadonlyPaths)
			}
			for _, dst := range []string{"/sys", "/sys/fs/cgroup"} {
				m := mountAt(s, dst)
				if len(m) != 1 {
					t.Fatalf("%s mounts: %v", dst, m)
				}
				if rw := slices.Contains(m[0].Options, "rw"); rw != tt.sysRW || slices.Contains(m[0].Options, "ro") == tt.sysRW {
					t.Errorf("%s options %v, want rw=%v", dst, m[0].Options, tt.sysRW)
				}
			}
			want := []specs.LinuxDeviceCgroup{{Allow: tt.devicesAllowAll, Access: "rwm"}}
			if diff := cmp.Diff(want, s.Linux.Resources.Devices); diff != "" {
				t.Errorf("device cgroup (-want +got):\n%s", diff)
			}
			if r := s.Linux.Resources; r.Memory != nil || r.CPU != nil || r.Pids != nil {
				t.Errorf("resources %+v, want only devices", r)
			}
		})
	}
}

// The seccomp profile depends on the capabilities: CAP_SYS_ADMIN unlocks
// mount(2) in the moby profile.
func TestSpecSeccompFollowsCaps(t *testing.T) {
	allows := func(s *specs.Spec, name string) bool {
		for _, r := range s.Linux.Seccomp.Syscalls {
			if r.Action == specs.ActAllow && slices.Contains(r.Names, name) {
				return true
			}
		}
		return false
	}
	plain, err := Spec("rootfs", base())
	if err != nil {
		t.Fatal(err)
	}
	admin, err := Spec("rootfs", with(func(c *Config) { c.CapAdd = []string{"SYS_ADMIN"} }))
	if err != nil {
		t.Fatal(err)
	}
	if allows(plain, "mount") || !allows(admin, "mount") {
		t.Errorf("mount allowed: default %v, with SYS_ADMIN %v", allows(plain, "mount"), allows(admin, "mount"))
	}
}

func TestSpecMounts(t *testing.T) {
	dsts := func(ms []specs.Mount) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Destination)
		}
		return out
	}
	defaults := []string{"/proc", "/dev", "/dev/pts", "/dev/shm", "/dev/mqueue", "/sys", "/sys/fs/cgroup"}
	tests := []struct {
		name   string
		mounts []Mount
		want   []string
	}{
		{name: "defaults", want: defaults},
		{name: "volumes appended", mounts: []Mount{{Source: "/v/data", Destination: "/data"}, {Source: "/v/hosts", Destination: "/etc/hosts", ReadOnly: true}},
			want: append(slices.Clone(defaults), "/data", "/etc/hosts")},
		{name: "caller /dev/shm replaces default", mounts: []Mount{{Source: "/pod/shm", Destination: "/dev/shm/"}},
			want: []string{"/proc", "/dev", "/dev/pts", "/dev/mqueue", "/sys", "/sys/fs/cgroup", "/dev/shm"}},
		{name: "caller /dev replaces everything under it", mounts: []Mount{{Source: "/hostdev", Destination: "/dev"}},
			want: []string{"/proc", "/sys", "/sys/fs/cgroup", "/dev"}},
		{name: "parents before children", mounts: []Mount{{Source: "/b", Destination: "/data/b"}, {Source: "/a", Destination: "/data"}, {Source: "/c", Destination: "/etc/x"}},
			want: append(slices.Clone(defaults), "/data", "/data/b", "/etc/x")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Spec("rootfs", with(func(c *Config) { c.Mounts = tt.mounts }))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, dsts(s.Mounts)); diff != "" {
				t.Errorf("mount destinations (-want +got):\n%s", diff)
			}
		})
	}

	s, err := Spec("rootfs", with(func(c *Config) {
		c.Mounts = []Mount{{Source: "/v/data", Destination: "/data"}, {Source: "/v/shm", Destination: "/dev/shm", ReadOnly: true}}
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := []specs.Mount{
		{Destination: "/data", Type: "bind", Source: "/v/data", Options: []string{"rbind", "rprivate", "rw"}},
		{Destination: "/dev/shm", Type: "bind", Source: "/v/shm", Options: []string{"rbind", "rprivate", "ro"}},
	}
	if diff := cmp.Diff(want, s.Mounts[len(s.Mounts)-2:]); diff != "" {
		t.Errorf("bind mounts (-want +got):\n%s", diff)
	}
	wantDefaults := map[string]specs.Mount{
		"/proc":       {Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
		"/dev":        {Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		"/dev/pts":    {Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}},
		"/dev/mqueue": {Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
		"/sys":        {Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
	}
	for dst, w := range wantDefaults {
		if diff := cmp.Diff([]specs.Mount{w}, mountAt(s, dst)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", dst, diff)
		}
	}
	if d, _ := Spec("rootfs", base()); !cmp.Equal(mountAt(d, "/dev/shm"), []specs.Mount{{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}}}) {
		t.Errorf("default /dev/shm: %v", mountAt(d, "/dev/shm"))
	}
}

func TestSpecDoesNotAlias(t *testing.T) {
	c := with(func(c *Config) {
		c.Args = []string{"/app"}
		c.AdditionalGIDs = []uint32{1}
		c.Sysctls = map[string]string{"kernel.shm_rmid_forced": "1"}
	})
	s, err := Spec("rootfs", c)
	if err != nil {
		t.Fatal(err)
	}
	s.Process.Args[0] = "x"
	s.Process.User.AdditionalGids[0] = 9
	s.Linux.Sysctl["kernel.shm_rmid_forced"] = "0"
	s.Process.Capabilities.Bounding[0] = "x"
	if c.Args[0] != "/app" || c.AdditionalGIDs[0] != 1 || c.Sysctls["kernel.shm_rmid_forced"] != "1" {
		t.Error("spec shares memory with the config")
	}
	if s.Process.Capabilities.Effective[0] == "x" {
		t.Error("capability sets share memory")
	}
}

func TestCapsFromBitmap(t *testing.T) {
	// 0x1fffeffffff: this VM's CapEff, everything up to
	// CAP_CHECKPOINT_RESTORE (40) but CAP_SYS_RESOURCE (24).
	got := capsFromBitmap(0x1fffeffffff)
	if want := without(knownCaps, "CAP_SYS_RESOURCE"); !slices.Equal(got, want) {
		t.Errorf("got %v", got)
	}
	if got := capsFromBitmap(1<<13 | 1<<63); !slices.Equal(got, []string{"CAP_NET_RAW"}) {
		t.Errorf("unknown bits: got %v", got)
	}
}
