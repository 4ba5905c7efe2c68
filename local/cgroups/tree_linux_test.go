package cgroups

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Where knit dev's own cgroups are, from /proc/self/cgroup and
// /proc/self/mountinfo as machines have them.
func TestParseCgroupHost(t *testing.T) {
	const hybridMounts = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	for _, tc := range []struct {
		name                 string
		procCgroup, mountinf string
		want                 cgroupHost
		wantErr              string
	}{
		{
			name: "v1 hybrid, memory in a cgroup of its own, cpu at the root",
			procCgroup: `9:name=systemd:/
4:memory:/process_api/c41a
2:cpuacct:/
1:cpu:/
0::/
`,
			mountinf: hybridMounts,
			want: cgroupHost{
				dirs:   map[string]string{"memory": "/sys/fs/cgroup/memory/process_api/c41a", "cpu": "/sys/fs/cgroup/cpu"},
				points: map[string]string{"memory": "/sys/fs/cgroup/memory", "cpu": "/sys/fs/cgroup/cpu"},
			},
		},
		{
			name: "v1 with cpu and cpuacct mounted together",
			procCgroup: `3:cpu,cpuacct:/user.slice
2:memory:/user.slice/user-1000.slice
`,
			mountinf: `25 24 0:22 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
26 24 0:23 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
`,
			want: cgroupHost{
				dirs:   map[string]string{"cpu": "/sys/fs/cgroup/cpu,cpuacct/user.slice", "memory": "/sys/fs/cgroup/memory/user.slice/user-1000.slice"},
				points: map[string]string{"cpu": "/sys/fs/cgroup/cpu,cpuacct", "memory": "/sys/fs/cgroup/memory"},
			},
		},
		{
			name:       "v2",
			procCgroup: "0::/user.slice/user-1000.slice/session-2.scope\n",
			mountinf:   "30 24 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
			want: cgroupHost{v2: true,
				dirs:   map[string]string{"": "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"},
				points: map[string]string{"": "/sys/fs/cgroup"},
			},
		},
		{
			name:       "v2 in a container that mounts its own cgroup as the root",
			procCgroup: "0::/docker/abc\n",
			mountinf:   "30 24 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			want:       cgroupHost{v2: true, dirs: map[string]string{"": "/sys/fs/cgroup"}, points: map[string]string{"": "/sys/fs/cgroup"}},
		},
		{
			name:       "a mount point with a space",
			procCgroup: "0::/a\n",
			mountinf:   `30 24 0:26 / /mnt/cgroup\040two rw - cgroup2 cgroup2 rw` + "\n",
			want:       cgroupHost{v2: true, dirs: map[string]string{"": "/mnt/cgroup two/a"}, points: map[string]string{"": "/mnt/cgroup two"}},
		},
		{
			name:       "v2 not mounted",
			procCgroup: "0::/a\n",
			mountinf:   "22 1 0:21 / /proc rw - proc proc rw\n",
			want:       cgroupHost{dirs: map[string]string{}, points: map[string]string{}},
			wantErr:    "no cgroup hierarchy with the memory or cpu controller is mounted",
		},
		{
			name:       "own cgroup outside the mount",
			procCgroup: "0::/elsewhere\n",
			mountinf:   "30 24 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			want:       cgroupHost{dirs: map[string]string{}, points: map[string]string{}},
			wantErr:    "this process's cgroup /elsewhere is outside the cgroup2 mount at /sys/fs/cgroup",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseCgroupHost([]byte(tc.procCgroup), []byte(tc.mountinf))
			if gotErr := errString(err); gotErr != tc.wantErr {
				t.Errorf("error = %q, want %q", gotErr, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(cgroupHost{})); diff != "" {
				t.Errorf("parseCgroupHost (-want +got):\n%s", diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Which limits go unenforced, and the warning that says so.
func TestUnenforced(t *testing.T) {
	noCgroups := errors.New("make cgroup /sys/fs/cgroup/memory/knit-1: permission denied")
	limited := Limits{Memory: 1, CPUQuota: 1000, CPUShares: 10}
	for _, tc := range []struct {
		name    string
		tree    *Tree
		openErr error
		l       Limits
		want    string
	}{
		{name: "no limits need nothing", openErr: noCgroups, l: Limits{CPUShares: 2}},
		{name: "no cgroups", openErr: noCgroups, l: limited,
			want: "memory and cpu limits are not enforced: make cgroup /sys/fs/cgroup/memory/knit-1: permission denied"},
		{name: "no cpu controller", tree: &Tree{controllers: []string{"memory"}}, l: limited,
			want: "cpu limits are not enforced: knit dev's cgroup does not delegate that controller"},
		{name: "all there", tree: &Tree{controllers: []string{"memory", "cpu"}}, l: limited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.tree.Unenforced(tc.l, tc.openErr); got != tc.want {
				t.Errorf("Unenforced = %q, want %q", got, tc.want)
			}
		})
	}
}
