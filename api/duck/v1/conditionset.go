package v1

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionSet declares once, per kind, which conditions a resource owns and
// which of them Ready depends on. Ready is derived: False when any dependent
// is False, Unknown while any is Unknown, True when all are True. Conditions
// outside the dependents are informational and never move Ready.
type ConditionSet struct {
	dependents []ConditionType
}

// NewLivingConditionSet returns the set for a long-running resource whose
// Ready follows the given dependents.
func NewLivingConditionSet(dependents ...ConditionType) ConditionSet {
	return ConditionSet{dependents: dependents}
}

// Manage binds the set to one status so conditions can be marked on it.
func (cs ConditionSet) Manage(s *Status) ConditionManager {
	return ConditionManager{set: cs, status: s}
}

// ConditionManager marks conditions on a status and keeps Ready consistent.
type ConditionManager struct {
	set    ConditionSet
	status *Status
}

// InitializeConditions adds every owned condition as Unknown where it is
// missing, so a new resource shows its whole checklist from the start.
func (m ConditionManager) InitializeConditions() {
	for _, t := range append([]ConditionType{ConditionReady}, m.set.dependents...) {
		if m.status.GetCondition(t) == nil {
			m.set1(Condition{Type: t, Status: corev1.ConditionUnknown})
		}
	}
	m.recomputeReady()
}

// MarkTrue sets t True and, when it was the last dependent pending, Ready.
func (m ConditionManager) MarkTrue(t ConditionType) {
	m.mark(t, corev1.ConditionTrue, "", "")
}

// MarkTrueWithReason sets t True while keeping a reason worth showing.
func (m ConditionManager) MarkTrueWithReason(t ConditionType, reason, message string) {
	m.mark(t, corev1.ConditionTrue, reason, message)
}

// MarkUnknown sets t Unknown: the controller is waiting on something.
func (m ConditionManager) MarkUnknown(t ConditionType, reason, message string) {
	m.mark(t, corev1.ConditionUnknown, reason, message)
}

// MarkFalse sets t False: something failed and the message says what.
func (m ConditionManager) MarkFalse(t ConditionType, reason, message string) {
	m.mark(t, corev1.ConditionFalse, reason, message)
}

// IsHappy reports whether Ready is True.
func (m ConditionManager) IsHappy() bool {
	return m.status.GetCondition(ConditionReady).IsTrue()
}

func (m ConditionManager) mark(t ConditionType, st corev1.ConditionStatus, reason, message string) {
	m.set1(Condition{Type: t, Status: st, Reason: reason, Message: message, Severity: m.severity(t)})
	if t != ConditionReady {
		m.recomputeReady()
	}
}

func (m ConditionManager) severity(t ConditionType) ConditionSeverity {
	if t == ConditionReady || m.isDependent(t) {
		return ConditionSeverityError
	}
	return ConditionSeverityInfo
}

func (m ConditionManager) isDependent(t ConditionType) bool {
	for _, d := range m.set.dependents {
		if d == t {
			return true
		}
	}
	return false
}

// recomputeReady derives Ready from the dependents; with no dependents,
// Ready is whatever the controller marked directly.
func (m ConditionManager) recomputeReady() {
	if len(m.set.dependents) == 0 {
		return
	}
	var unknown *Condition
	for _, d := range m.set.dependents {
		c := m.status.GetCondition(d)
		switch {
		case c.IsFalse():
			m.set1(Condition{Type: ConditionReady, Status: corev1.ConditionFalse, Reason: c.Reason, Message: c.Message})
			return
		case c.IsUnknown() && unknown == nil:
			if c == nil {
				c = &Condition{Type: d, Status: corev1.ConditionUnknown}
			}
			unknown = c
		}
	}
	if unknown != nil {
		m.set1(Condition{Type: ConditionReady, Status: corev1.ConditionUnknown, Reason: unknown.Reason, Message: unknown.Message})
		return
	}
	m.set1(Condition{Type: ConditionReady, Status: corev1.ConditionTrue})
}

// set1 stores c, keeping the old transition time when nothing changed so
// that a resync does not churn status.
func (m ConditionManager) set1(c Condition) {
	if old := m.status.GetCondition(c.Type); old != nil {
		if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message && old.Severity == c.Severity {
			return
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
	}
	if c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = metav1.NewTime(time.Now().Truncate(time.Second))
	}
	conds := Conditions{c}
	for _, o := range m.status.Conditions {
		if o.Type != c.Type {
			conds = append(conds, o)
		}
	}
	sort.Slice(conds, func(i, j int) bool { return conds[i].Type < conds[j].Type })
	m.status.Conditions = conds
}
