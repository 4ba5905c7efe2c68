package runtime

import (
	"os"
	"path/filepath"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
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
		want requests
	}{{
		name: "nothing asked",
		spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
	}, {
		name: "containers summed",
		spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Resources: corev1.ResourceRequirements{Requests: res("cpu", "500m", "memory", "128Mi")}},
			{Name: "queue-proxy", Resources: corev1.ResourceRequirements{Requests: res("cpu", "25m")}},
		}},
		want: requests{cpuMilli: 525, memory: 128 << 20},
	}, {
		name: "a limit without a request is the request",
		spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Resources: corev1.ResourceRequirements{Limits: res("cpu", "2", "memory", "1Gi"), Requests: res("cpu", "100m")}},
		}},
		want: requests{cpuMilli: 100, memory: 1 << 30},
	}, {
		name: "the largest init container where it asks more, plus overhead",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "migrate", Resources: corev1.ResourceRequirements{Requests: res("cpu", "3", "memory", "1Mi")}}},
			Containers:     []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: res("cpu", "1", "memory", "2Mi")}}},
			Overhead:       res("cpu", "10m"),
		},
		want: requests{cpuMilli: 3010, memory: 2 << 20},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := podRequests(&tc.spec); got != tc.want {
				t.Errorf("podRequests = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Replicas are placed while they fit; one that does not waits with the
// scheduler's words until a placed one leaves.
func TestNodePlacesWhatFits(t *testing.T) {
	n := newNode(requests{cpuMilli: 2000, memory: 1 << 30}, nodeIdentity{})
	a, b, c := &replica{id: "a"}, &replica{id: "b"}, &replica{id: "c"}
	if why, _ := n.place(a, requests{cpuMilli: 1500}); why != "" {
		t.Fatalf("a: %s", why)
	}
	why, retry := n.place(b, requests{cpuMilli: 1000, memory: 2 << 30})
	if want := "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory."; why != want {
		t.Fatalf("b: %q, want %q", why, want)
	}
	if why, _ := n.place(c, requests{}); why != "" {
		t.Fatalf("a pod that asks nothing always fits: %s", why)
	}
	select {
	case <-retry:
		t.Fatal("told to retry before anything left")
	default:
	}
	n.remove(a)
	select {
	case <-retry:
	default:
		t.Fatal("a leaving did not wake the waiting replica")
	}
	if why, _ := n.place(b, requests{cpuMilli: 1000, memory: 512 << 20}); why != "" {
		t.Fatalf("b after a left: %s", why)
	}
	n.remove(a) // twice: nothing to wake
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

func TestRulesSeePods(t *testing.T) {
	rule := func(ops []admissionv1.OperationType, groups, resources []string) []admissionv1.RuleWithOperations {
		return []admissionv1.RuleWithOperations{{Operations: ops, Rule: admissionv1.Rule{APIGroups: groups, Resources: resources}}}
	}
	create := []admissionv1.OperationType{admissionv1.Create}
	for _, tc := range []struct {
		name  string
		rules []admissionv1.RuleWithOperations
		want  bool
	}{
		{"knit's own, on serving resources", rule(create, []string{"serving.knative.dev"}, []string{"services", "revisions"}), false},
		{"pods created", rule(create, []string{""}, []string{"pods"}), true},
		{"everything", rule([]admissionv1.OperationType{admissionv1.OperationAll}, []string{"*"}, []string{"*"}), true},
		{"pods deleted only", rule([]admissionv1.OperationType{admissionv1.Delete}, []string{""}, []string{"pods"}), false},
		{"pods' status only", rule(create, []string{""}, []string{"pods/status"}), false},
	} {
		if got := rulesSeePods(tc.rules); got != tc.want {
			t.Errorf("%s: rulesSeePods = %v, want %v", tc.name, got, tc.want)
		}
	}
}
