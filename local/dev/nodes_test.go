package dev

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(name string, ready corev1.ConditionStatus) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if ready != "" {
		n.Status.Conditions = []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue},
			{Type: corev1.NodeReady, Status: ready},
		}
	}
	return n
}

func TestReadyNodes(t *testing.T) {
	tests := []struct {
		name  string
		nodes []corev1.Node
		want  []string
	}{
		{"no nodes: an API server without kubelets", nil, nil},
		{"a node that never reported", []corev1.Node{node("a", "")}, nil},
		{"NotReady and Unknown nodes run nothing", []corev1.Node{node("a", corev1.ConditionFalse), node("b", corev1.ConditionUnknown)}, nil},
		{"Ready nodes are named", []corev1.Node{node("a", corev1.ConditionTrue), node("b", corev1.ConditionFalse), node("c", corev1.ConditionTrue)}, []string{"a", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, readyNodes(tt.nodes)); diff != "" {
				t.Errorf("readyNodes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodesErrorPointsToTheChart(t *testing.T) {
	if err := nodesError("https://x", nil); err != nil {
		t.Errorf("no Ready nodes: %v, want nil", err)
	}
	err := nodesError("https://10.0.0.1:6443", []string{"n1"})
	if err == nil {
		t.Fatal("a Ready node: nil error, want a refusal")
	}
	for _, want := range []string{"https://10.0.0.1:6443", "1 Ready node(s) (n1)", "helm install knit charts/knit"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
