package runtime

import (
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/knitops/knit/local/nodefit"
)

// Replicas are placed while they fit; one that does not waits with the
// scheduler's words until a placed one leaves.
func TestNodePlacesWhatFits(t *testing.T) {
	n := newNode(nodefit.Requests{CPUMilli: 2000, Memory: 1 << 30}, nodefit.Node{})
	a, b, c := &replica{id: "a"}, &replica{id: "b"}, &replica{id: "c"}
	if why, _ := n.place(a, nodefit.Requests{CPUMilli: 1500}); why != "" {
		t.Fatalf("a: %s", why)
	}
	why, retry := n.place(b, nodefit.Requests{CPUMilli: 1000, Memory: 2 << 30})
	if want := "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory."; why != want {
		t.Fatalf("b: %q, want %q", why, want)
	}
	if why, _ := n.place(c, nodefit.Requests{}); why != "" {
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
	if why, _ := n.place(b, nodefit.Requests{CPUMilli: 1000, Memory: 512 << 20}); why != "" {
		t.Fatalf("b after a left: %s", why)
	}
	n.remove(a) // twice: nothing to wake
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
