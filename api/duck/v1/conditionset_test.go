package v1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestConditionSetDerivesReady(t *testing.T) {
	const a, b ConditionType = "A", "B"
	set := NewLivingConditionSet(a, b)
	tests := []struct {
		name       string
		marks      func(m ConditionManager)
		wantStatus corev1.ConditionStatus
		wantReason string
	}{{
		name:       "fresh resource waits on everything",
		marks:      func(ConditionManager) {},
		wantStatus: corev1.ConditionUnknown,
	}, {
		name:       "one dependent true, one pending",
		marks:      func(m ConditionManager) { m.MarkTrue(a); m.MarkUnknown(b, "Deploying", "waiting") },
		wantStatus: corev1.ConditionUnknown,
		wantReason: "Deploying",
	}, {
		name:       "all dependents true",
		marks:      func(m ConditionManager) { m.MarkTrue(a); m.MarkTrue(b) },
		wantStatus: corev1.ConditionTrue,
	}, {
		name:       "a false dependent wins over an unknown one",
		marks:      func(m ConditionManager) { m.MarkUnknown(a, "Pending", ""); m.MarkFalse(b, "ExitCode1", "app exited") },
		wantStatus: corev1.ConditionFalse,
		wantReason: "ExitCode1",
	}, {
		name:       "recovering from failure",
		marks:      func(m ConditionManager) { m.MarkFalse(a, "Crash", ""); m.MarkTrue(b); m.MarkTrue(a) },
		wantStatus: corev1.ConditionTrue,
	}, {
		name:       "informational condition never moves Ready",
		marks:      func(m ConditionManager) { m.MarkTrue(a); m.MarkTrue(b); m.MarkFalse("Active", "NoTraffic", "") },
		wantStatus: corev1.ConditionTrue,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s Status
			m := set.Manage(&s)
			m.InitializeConditions()
			tc.marks(m)
			ready := s.GetCondition(ConditionReady)
			if ready.Status != tc.wantStatus || ready.Reason != tc.wantReason {
				t.Errorf("Ready = %s/%q, want %s/%q", ready.Status, ready.Reason, tc.wantStatus, tc.wantReason)
			}
		})
	}
}

func TestConditionSetKeepsTransitionTimeAndOrder(t *testing.T) {
	var s Status
	m := NewLivingConditionSet("B", "A").Manage(&s)
	m.InitializeConditions()
	m.MarkTrue("A")
	before := s.DeepCopy()
	m.MarkTrue("A")
	if diff := cmp.Diff(before, &s); diff != "" {
		t.Errorf("marking an unchanged condition changed status (-before +after):\n%s", diff)
	}
	var types []ConditionType
	for _, c := range s.Conditions {
		types = append(types, c.Type)
	}
	if diff := cmp.Diff([]ConditionType{"A", "B", "Ready"}, types); diff != "" {
		t.Errorf("conditions not sorted by type (-want +got):\n%s", diff)
	}
	if got := s.GetCondition("Info"); got != nil {
		t.Errorf("GetCondition of a missing type = %v, want nil", got)
	}
	m.MarkFalse("Info", "Why", "")
	if got := s.GetCondition("Info").Severity; got != ConditionSeverityInfo {
		t.Errorf("severity of a non-dependent = %q, want Info", got)
	}
}
