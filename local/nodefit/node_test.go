package nodefit

import (
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// A pod goes to this machine as the scheduler's TaintToleration and
// NodeAffinity filters let it go to a node: its tolerations against the
// node's NoSchedule and NoExecute taints, its nodeSelector and its
// required node affinity's terms against the node's labels and name.
func TestNodeFitAsTheScheduler(t *testing.T) {
	n := Machine(map[string]string{"disktype": "ssd", "zone": "3"}, []corev1.Taint{
		{Key: "dedicated", Value: "knit", Effect: corev1.TaintEffectNoSchedule},
		{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule},
	})
	n.Name = "dev-box"
	tolerate := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "knit", Effect: corev1.TaintEffectNoSchedule}}
	affinity := func(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
		}}
	}
	expr := func(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
	}
	const (
		taint     = "0/1 nodes are available: 1 node(s) had untolerated taint(s)."
		unmatched = "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
	)
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want string
	}{
		{"an untolerated NoSchedule taint", corev1.PodSpec{}, taint},
		{"a toleration of it", corev1.PodSpec{Tolerations: tolerate}, ""},
		{"a toleration of every taint", corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}, ""},
		{"a toleration of another value", corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "dedicated", Value: "other", Effect: corev1.TaintEffectNoSchedule}}}, taint},
		{"a nodeSelector the node's labels match", corev1.PodSpec{Tolerations: tolerate, NodeSelector: map[string]string{"disktype": "ssd", corev1.LabelOSStable: n.Labels[corev1.LabelOSStable]}}, ""},
		{"a nodeSelector they do not", corev1.PodSpec{Tolerations: tolerate, NodeSelector: map[string]string{"disktype": "hdd"}}, unmatched},
		{"the taint before the selector", corev1.PodSpec{NodeSelector: map[string]string{"disktype": "hdd"}}, taint},
		{"a term that matches", corev1.PodSpec{Tolerations: tolerate, Affinity: affinity(expr("disktype", corev1.NodeSelectorOpIn, "ssd", "nvme"))}, ""},
		{"terms are ORed", corev1.PodSpec{Tolerations: tolerate, Affinity: affinity(expr("gpu", corev1.NodeSelectorOpExists), expr("zone", corev1.NodeSelectorOpGt, "2"))}, ""},
		{"no term matches", corev1.PodSpec{Tolerations: tolerate, Affinity: affinity(expr("gpu", corev1.NodeSelectorOpExists), expr("zone", corev1.NodeSelectorOpLt, "2"))}, unmatched},
		{"NotIn and DoesNotExist", corev1.PodSpec{Tolerations: tolerate, Affinity: affinity(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "disktype", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"hdd"}}, {Key: "gpu", Operator: corev1.NodeSelectorOpDoesNotExist},
		}})}, ""},
		{"an empty term matches nothing", corev1.PodSpec{Tolerations: tolerate, Affinity: affinity(corev1.NodeSelectorTerm{})}, unmatched},
		{"matchFields on the node's name", corev1.PodSpec{Tolerations: tolerate, Affinity: affinity(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"dev-box"}},
		}})}, ""},
		{"matchFields on another name", corev1.PodSpec{Tolerations: tolerate, Affinity: affinity(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"elsewhere"}},
		}})}, unmatched},
		{"preferred affinity decides nothing", corev1.PodSpec{Tolerations: tolerate, Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: expr("disktype", corev1.NodeSelectorOpIn, "hdd")}},
		}}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := n.Unfit(&tc.spec, logr.Discard()); got != tc.want {
				t.Errorf("unfit = %q, want %q", got, tc.want)
			}
		})
	}
}

// This machine is a node with the labels a kubelet registers.
func TestMachineNodeLabels(t *testing.T) {
	n := Machine(map[string]string{"extra": "yes"}, nil)
	for _, k := range []string{corev1.LabelHostname, corev1.LabelOSStable, corev1.LabelArchStable, "beta.kubernetes.io/os", "beta.kubernetes.io/arch", "extra"} {
		if n.Labels[k] == "" {
			t.Errorf("label %s missing: %v", k, n.Labels)
		}
	}
	if n.Labels[corev1.LabelHostname] != n.Name || n.Name == "" {
		t.Errorf("hostname label %q, node name %q: want the same, not empty", n.Labels[corev1.LabelHostname], n.Name)
	}
}
