package nodefit

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestPodRequests(t *testing.T) {
	res := func(kv ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return l
	}
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want Requests
	}{{
		name: "nothing asked",
		spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
	}, {
		name: "containers summed",
		spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Resources: corev1.ResourceRequirements{Requests: res("cpu", "500m", "memory", "128Mi")}},
			{Name: "queue-proxy", Resources: corev1.ResourceRequirements{Requests: res("cpu", "25m")}},
		}},
		want: Requests{CPUMilli: 525, Memory: 128 << 20},
	}, {
		name: "a limit without a request is the request",
		spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Resources: corev1.ResourceRequirements{Limits: res("cpu", "2", "memory", "1Gi"), Requests: res("cpu", "100m")}},
		}},
		want: Requests{CPUMilli: 100, Memory: 1 << 30},
	}, {
		name: "the largest init container where it asks more, plus overhead",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "migrate", Resources: corev1.ResourceRequirements{Requests: res("cpu", "3", "memory", "1Mi")}}},
			Containers:     []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: res("cpu", "1", "memory", "2Mi")}}},
			Overhead:       res("cpu", "10m"),
		},
		want: Requests{CPUMilli: 3010, Memory: 2 << 20},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PodRequests(&tc.spec); got != tc.want {
				t.Errorf("podRequests = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A pod fits while the node's allocatable covers it beside what is
// placed; otherwise the scheduler says which resources are short.
func TestInsufficient(t *testing.T) {
	node := Requests{CPUMilli: 2000, Memory: 1 << 30}
	for _, tc := range []struct {
		name       string
		node, used Requests
		want       Requests
		short      string
	}{
		{"fits", node, Requests{CPUMilli: 500}, Requests{CPUMilli: 1500}, ""},
		{"both short", node, Requests{CPUMilli: 1500}, Requests{CPUMilli: 1000, Memory: 2 << 30}, "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory."},
		{"memory short", node, Requests{Memory: 1 << 29}, Requests{Memory: 1 << 30}, "0/1 nodes are available: 1 Insufficient memory."},
		{"a pod that asks nothing always fits", node, Requests{CPUMilli: 5000}, Requests{}, ""},
		{"a node that does not limit", Requests{}, Requests{CPUMilli: 5000}, Requests{CPUMilli: 5000}, ""},
	} {
		if got := Insufficient(tc.node, tc.used, tc.want); got != tc.short {
			t.Errorf("%s: Insufficient = %q, want %q", tc.name, got, tc.short)
		}
	}
}

func TestMemTotal(t *testing.T) {
	p := filepath.Join(t.TempDir(), "meminfo")
	if err := os.WriteFile(p, []byte("MemFree:  100 kB\nMemTotal:       24576000 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := memTotal(p); got != 24576000*1024 {
		t.Errorf("memTotal = %d", got)
	}
	if got := memTotal(filepath.Join(t.TempDir(), "none")); got != 0 {
		t.Errorf("memTotal of no file = %d, want 0", got)
	}
}
