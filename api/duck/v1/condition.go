package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionType names one aspect of a resource's state, such as Ready.
type ConditionType string

// ConditionReady is the one condition every knit resource carries; kubectl's
// READY and REASON columns read it.
const ConditionReady ConditionType = "Ready"

// ConditionSeverity says whether a False condition should make the resource
// not Ready (Error, the empty value) or is only worth showing (Warning, Info).
type ConditionSeverity string

// Severities as Knative defines them.
const (
	ConditionSeverityError   ConditionSeverity = ""
	ConditionSeverityWarning ConditionSeverity = "Warning"
	ConditionSeverityInfo    ConditionSeverity = "Info"
)

// Condition is Knative's condition: like metav1.Condition but with a
// severity, and reason and message free to be empty while a state is True.
type Condition struct {
	// Type of condition.
	Type ConditionType `json:"type"`
	// Status of the condition, one of True, False, Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// Severity with which to treat failures of this type of condition.
	// +optional
	Severity ConditionSeverity `json:"severity,omitempty"`
	// LastTransitionTime is the last time the condition changed status.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Reason is a one-word CamelCase cause of the last transition.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message says in words what happened and what to do about it.
	// +optional
	Message string `json:"message,omitempty"`
}

// IsTrue reports whether the condition is present and True; a nil condition
// is not true, which keeps callers free of nil checks.
func (c *Condition) IsTrue() bool {
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsFalse reports whether the condition is present and False.
func (c *Condition) IsFalse() bool {
	return c != nil && c.Status == corev1.ConditionFalse
}

// IsUnknown reports whether the condition is absent or Unknown.
func (c *Condition) IsUnknown() bool {
	return c == nil || c.Status == corev1.ConditionUnknown
}

// Conditions is the list of a resource's conditions, kept sorted by type.
type Conditions []Condition
