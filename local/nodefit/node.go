package nodefit

import (
	"fmt"
	"maps"
	"os"
	goruntime "runtime"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// The scheduler's words for a node a pod cannot go to, by filter
// (TaintToleration, NodeAffinity), as they end its "0/1 nodes are
// available: …" message.
const (
	reasonUntoleratedTaint  = "1 node(s) had untolerated taint(s)"
	reasonNodeAffinityMatch = "1 node(s) didn't match Pod's node affinity/selector"
)

// Node is a node as the scheduler's filters other than resources read
// it: its name, labels and taints. knit dev schedules through no Node
// object, so its own is made here, as a kubelet would register one
// (Machine); the Node knit dev registers for kubectl logs copies it.
type Node struct {
	Name   string
	Labels map[string]string
	Taints []corev1.Taint
}

// Machine is this machine as a node: named by its hostname, lowered, as
// the kubelet names its node, with the labels the kubelet registers
// (hostname, os, arch, and the beta. forms it still writes) and extra
// over them, and taints.
func Machine(extra map[string]string, taints []corev1.Taint) Node {
	host, err := os.Hostname()
	if err != nil || strings.TrimSpace(host) == "" {
		host = "localhost"
	}
	name := strings.ToLower(strings.TrimSpace(host))
	l := map[string]string{
		corev1.LabelHostname:      name,
		corev1.LabelOSStable:      goruntime.GOOS,
		corev1.LabelArchStable:    goruntime.GOARCH,
		"beta.kubernetes.io/os":   goruntime.GOOS,
		"beta.kubernetes.io/arch": goruntime.GOARCH,
	}
	maps.Copy(l, extra)
	return Node{Name: name, Labels: l, Taints: taints}
}

// Unfit says, in the scheduler's words, why a pod of spec cannot go to
// node n whatever its resources ("" when it can): a NoSchedule or
// NoExecute taint its tolerations do not tolerate (TaintToleration, which
// the scheduler runs first), else its nodeSelector or required node
// affinity not matching n (NodeAffinity). Both are final for the pod:
// n's labels and taints do not change while knit dev runs, so unlike a
// lack of room nothing but a new pod template mends them. Preferred
// affinity, topology spread and inter-pod affinity decide nothing with
// one node, and are not looked at.
func (n Node) Unfit(spec *corev1.PodSpec, log logr.Logger) string {
	if n.untolerated(spec.Tolerations) {
		return fmt.Sprintf("0/1 nodes are available: %s.", reasonUntoleratedTaint)
	}
	if !n.matches(spec, log) {
		return fmt.Sprintf("0/1 nodes are available: %s.", reasonNodeAffinityMatch)
	}
	return ""
}

// untolerated reports a taint of n that keeps pods off it (NoSchedule,
// NoExecute; not PreferNoSchedule) and that none of tolerations
// tolerates.
func (n Node) untolerated(tolerations []corev1.Toleration) bool {
	for i := range n.Taints {
		taint := &n.Taints[i]
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !tolerates(tolerations, taint) {
			return true
		}
	}
	return false
}

// tolerates reports a toleration of taint among tolerations, as the
// scheduler matches them (comparison operators Lt and Gt included).
func tolerates(tolerations []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(logr.Discard(), taint, true) {
			return true
		}
	}
	return false
}

// matches reports the scheduler's required node affinity of spec holding
// for n: every label of its nodeSelector, and, when it sets one, a term
// of requiredDuringSchedulingIgnoredDuringExecution (terms are ORed, a
// term's expressions and fields ANDed, an empty term matches nothing). A
// term the scheduler could not parse matches nothing either; why is
// logged.
func (n Node) matches(spec *corev1.PodSpec, log logr.Logger) bool {
	if !labels.SelectorFromSet(spec.NodeSelector).Matches(labels.Set(n.Labels)) {
		return false
	}
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		ok, err := n.matchesTerm(term)
		if err != nil {
			log.Info("Node selector term ignored", "error", err.Error())
			continue
		}
		if ok {
			return true
		}
	}
	return false
}

// matchesTerm reports one node selector term matching n: its
// matchExpressions on n's labels, its matchFields on n's name (the only
// field a term may name, metadata.name, with In or NotIn and one value).
func (n Node) matchesTerm(term corev1.NodeSelectorTerm) (bool, error) {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false, nil
	}
	sel, err := labelRequirements(term.MatchExpressions)
	if err != nil {
		return false, err
	}
	if !sel.Matches(labels.Set(n.Labels)) {
		return false, nil
	}
	fsel, err := fieldRequirements(term.MatchFields)
	if err != nil {
		return false, err
	}
	return fsel.Matches(fields.Set{"metadata.name": n.Name}), nil
}

// nodeSelectorOps are the label selector operators of a node selector
// requirement's.
var nodeSelectorOps = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn:           selection.In,
	corev1.NodeSelectorOpNotIn:        selection.NotIn,
	corev1.NodeSelectorOpExists:       selection.Exists,
	corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt:           selection.GreaterThan,
	corev1.NodeSelectorOpLt:           selection.LessThan,
}

// labelRequirements is a term's matchExpressions as a label selector;
// none selects every node.
func labelRequirements(exprs []corev1.NodeSelectorRequirement) (labels.Selector, error) {
	sel := labels.NewSelector()
	for _, e := range exprs {
		op, ok := nodeSelectorOps[e.Operator]
		if !ok {
			return nil, fmt.Errorf("matchExpressions: operator %q is not supported", e.Operator)
		}
		r, err := labels.NewRequirement(e.Key, op, e.Values)
		if err != nil {
			return nil, fmt.Errorf("matchExpressions: %w", err)
		}
		sel = sel.Add(*r)
	}
	return sel, nil
}

// fieldRequirements is a term's matchFields as a field selector; none
// selects every node.
func fieldRequirements(exprs []corev1.NodeSelectorRequirement) (fields.Selector, error) {
	var sels []fields.Selector
	for _, e := range exprs {
		if len(e.Values) != 1 {
			return nil, fmt.Errorf("matchFields: %s must have one value", e.Key)
		}
		switch e.Operator {
		case corev1.NodeSelectorOpIn:
			sels = append(sels, fields.OneTermEqualSelector(e.Key, e.Values[0]))
		case corev1.NodeSelectorOpNotIn:
			sels = append(sels, fields.OneTermNotEqualSelector(e.Key, e.Values[0]))
		default:
			return nil, fmt.Errorf("matchFields: operator %q is not supported", e.Operator)
		}
	}
	return fields.AndSelectors(sels...), nil
}
