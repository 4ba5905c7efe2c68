package cgroups

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func resources(limits, requests map[corev1.ResourceName]string) corev1.ResourceRequirements {
	list := func(m map[corev1.ResourceName]string) corev1.ResourceList {
		if m == nil {
			return nil
		}
		l := corev1.ResourceList{}
		for k, v := range m {
			l[k] = resource.MustParse(v)
		}
		return l
	}
	return corev1.ResourceRequirements{Limits: list(limits), Requests: list(requests)}
}

// The kubelet's mapping of a container's resources onto its cgroup.
func TestContainerLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  corev1.ResourceRequirements
		want Limits
	}{
		{name: "nothing: the kubelet's minimum shares, no limit", want: Limits{CPUShares: 2}},
		{
			name: "Knative's runtime conformance: 1 CPU, 128Mi, 125m requested",
			res:  resources(map[corev1.ResourceName]string{"cpu": "1000m", "memory": "128Mi"}, map[corev1.ResourceName]string{"cpu": "125m"}),
			want: Limits{Memory: 128 << 20, CPUQuota: 100000, CPUShares: 128},
		},
		{
			name: "TestCustomResourcesLimits: 350Mi limited and requested",
			res:  resources(map[corev1.ResourceName]string{"memory": "350Mi"}, map[corev1.ResourceName]string{"memory": "350Mi"}),
			want: Limits{Memory: 350 << 20, CPUShares: 2},
		},
		{
			name: "a CPU limit without a request is requested too, as the API server defaults a pod",
			res:  resources(map[corev1.ResourceName]string{"cpu": "500m"}, nil),
			want: Limits{CPUQuota: 50000, CPUShares: 512},
		},
		{
			name: "a limit below 1ms a period is raised to it",
			res:  resources(map[corev1.ResourceName]string{"cpu": "5m"}, nil),
			want: Limits{CPUQuota: 1000, CPUShares: 5},
		},
		{
			name: "a tiny request gets the minimum shares",
			res:  resources(nil, map[corev1.ResourceName]string{"cpu": "1m"}),
			want: Limits{CPUShares: 2},
		},
		{
			name: "a huge request is clamped to the kernel's maximum",
			res:  resources(nil, map[corev1.ResourceName]string{"cpu": "300"}),
			want: Limits{CPUShares: 262144},
		},
		{
			name: "a memory request alone limits nothing",
			res:  resources(nil, map[corev1.ResourceName]string{"memory": "1Gi"}),
			want: Limits{CPUShares: 2},
		},
		{
			name: "a memory limit in decimal units is bytes as written",
			res:  resources(map[corev1.ResourceName]string{"memory": "300M"}, nil),
			want: Limits{Memory: 300_000_000, CPUShares: 2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ContainerLimits(tc.res)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ContainerLimits (-want +got):\n%s", diff)
			}
		})
	}
}

// The files each cgroup version gets, in the order they are written (the
// memory+swap limit after the memory limit it must not be below).
func TestCgroupFiles(t *testing.T) {
	limited := Limits{Memory: 64 << 20, CPUQuota: 50000, CPUShares: 512}
	for _, tc := range []struct {
		name   string
		l      Limits
		v1, v2 []file
	}{
		{
			name: "unlimited",
			l:    Limits{CPUShares: 2},
			v1: []file{
				{controller: "cpu", name: "cpu.shares", value: "2"},
				{controller: "cpu", name: "cpu.cfs_period_us", value: "100000"},
				{controller: "cpu", name: "cpu.cfs_quota_us", value: "-1"},
			},
			v2: []file{
				{controller: "cpu", name: "cpu.weight", value: "1"},
				{controller: "cpu", name: "cpu.max", value: "max 100000"},
			},
		},
		{
			name: "limited",
			l:    limited,
			v1: []file{
				{controller: "cpu", name: "cpu.shares", value: "512"},
				{controller: "cpu", name: "cpu.cfs_period_us", value: "100000"},
				{controller: "cpu", name: "cpu.cfs_quota_us", value: "50000"},
				{controller: "memory", name: "memory.limit_in_bytes", value: "67108864"},
				{controller: "memory", name: "memory.memsw.limit_in_bytes", value: "67108864", optional: true},
			},
			v2: []file{
				{controller: "cpu", name: "cpu.weight", value: "20"},
				{controller: "cpu", name: "cpu.max", value: "50000 100000"},
				{controller: "memory", name: "memory.max", value: "67108864"},
				{controller: "memory", name: "memory.swap.max", value: "0", optional: true},
				{controller: "memory", name: "memory.oom.group", value: "1", optional: true},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.v1, tc.l.v1Files(), cmp.AllowUnexported(file{})); diff != "" {
				t.Errorf("v1Files (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.v2, tc.l.v2Files(), cmp.AllowUnexported(file{})); diff != "" {
				t.Errorf("v2Files (-want +got):\n%s", diff)
			}
		})
	}
}

// cpu.weight is what Knative's conformance test computes from the shares.
func TestSharesToWeight(t *testing.T) {
	for shares, want := range map[int64]int64{2: 1, 128: 5, 1024: 39, 262144: 10000} {
		if got := sharesToWeight(shares); got != want {
			t.Errorf("sharesToWeight(%d) = %d, want %d", shares, got, want)
		}
	}
}
