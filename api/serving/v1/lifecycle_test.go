package v1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

// cond is what a test compares of a condition.
type cond struct {
	Status          corev1.ConditionStatus
	Reason, Message string
}

func condOf(s *duckv1.Status, t duckv1.ConditionType) *cond {
	c := s.GetCondition(t)
	if c == nil {
		return nil
	}
	return &cond{c.Status, c.Reason, c.Message}
}

func TestRevisionLifecycle(t *testing.T) {
	tests := []struct {
		name            string
		mark            func(*RevisionStatus)
		condition       duckv1.ConditionType
		want, wantReady cond
	}{{
		name:      "fresh",
		mark:      func(*RevisionStatus) {},
		condition: RevisionConditionResourcesAvailable,
		want:      cond{Status: corev1.ConditionUnknown},
		wantReady: cond{Status: corev1.ConditionUnknown},
	}, {
		name:      "deploying",
		mark:      func(rs *RevisionStatus) { rs.MarkDeploying("waiting for 1 replica(s)") },
		condition: RevisionConditionContainerHealthy,
		want:      cond{corev1.ConditionUnknown, ReasonDeploying, "waiting for 1 replica(s)"},
		wantReady: cond{corev1.ConditionUnknown, ReasonDeploying, "waiting for 1 replica(s)"},
	}, {
		name:      "ready",
		mark:      func(rs *RevisionStatus) { rs.MarkResourcesAvailableTrue(); rs.MarkContainerHealthyTrue() },
		condition: RevisionConditionResourcesAvailable,
		want:      cond{Status: corev1.ConditionTrue},
		wantReady: cond{Status: corev1.ConditionTrue},
	}, {
		name: "container crashing",
		mark: func(rs *RevisionStatus) {
			rs.MarkResourcesAvailableTrue()
			rs.MarkContainerHealthyFalse("CrashLoopBackOff", "back-off")
		},
		condition: RevisionConditionContainerHealthy,
		want:      cond{corev1.ConditionFalse, "CrashLoopBackOff", "back-off"},
		wantReady: cond{corev1.ConditionFalse, "CrashLoopBackOff", "back-off"},
	}, {
		name:      "resources unavailable",
		mark:      func(rs *RevisionStatus) { rs.MarkResourcesAvailableFalse("FailedCreate", "range is full") },
		condition: RevisionConditionResourcesAvailable,
		want:      cond{corev1.ConditionFalse, "FailedCreate", "range is full"},
		wantReady: cond{corev1.ConditionFalse, "FailedCreate", "range is full"},
	}, {
		name: "scaled to zero stays Ready",
		mark: func(rs *RevisionStatus) {
			rs.MarkResourcesAvailableTrue()
			rs.MarkContainerHealthyTrue()
			rs.MarkActiveFalse("NoTraffic", "at zero")
		},
		condition: RevisionConditionActive,
		want:      cond{corev1.ConditionFalse, "NoTraffic", "at zero"},
		wantReady: cond{Status: corev1.ConditionTrue},
	}, {
		name:      "activating",
		mark:      func(rs *RevisionStatus) { rs.MarkActiveTrue(); rs.MarkActiveUnknown("Activating", "waking") },
		condition: RevisionConditionActive,
		want:      cond{corev1.ConditionUnknown, "Activating", "waking"},
		wantReady: cond{Status: corev1.ConditionUnknown},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := &RevisionStatus{}
			rs.InitializeConditions()
			tc.mark(rs)
			if diff := cmp.Diff(&tc.want, condOf(&rs.Status, tc.condition)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.condition, diff)
			}
			if diff := cmp.Diff(&tc.wantReady, condOf(&rs.Status, duckv1.ConditionReady)); diff != "" {
				t.Errorf("Ready (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigurationLifecycle(t *testing.T) {
	tests := []struct {
		name string
		mark func(*ConfigurationStatus)
		want cond
	}{
		{"fresh", func(*ConfigurationStatus) {}, cond{Status: corev1.ConditionUnknown}},
		{"name taken", func(cs *ConfigurationStatus) { cs.MarkRevisionNameTaken("taken") }, cond{corev1.ConditionFalse, ReasonRevisionNameTaken, "taken"}},
		{"creation refused", func(cs *ConfigurationStatus) { cs.MarkRevisionCreationFailed("FailedCreate", "denied") }, cond{corev1.ConditionFalse, "FailedCreate", "denied"}},
		{"latest ready", func(cs *ConfigurationStatus) { cs.MarkLatestCreatedReady() }, cond{Status: corev1.ConditionTrue}},
		{"latest failed", func(cs *ConfigurationStatus) { cs.MarkLatestCreatedFailed("hello-00002", "exit 1") },
			cond{corev1.ConditionFalse, ReasonRevisionFailed, `Revision "hello-00002" failed with message: exit 1`}},
		{"latest deploying", func(cs *ConfigurationStatus) { cs.MarkLatestCreatedDeploying("hello-00002") },
			cond{corev1.ConditionUnknown, ReasonDeploying, `waiting for Revision "hello-00002" to become ready`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := &ConfigurationStatus{}
			cs.InitializeConditions()
			tc.mark(cs)
			if diff := cmp.Diff(&tc.want, condOf(&cs.Status, duckv1.ConditionReady)); diff != "" {
				t.Errorf("Ready (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRouteLifecycle(t *testing.T) {
	tests := []struct {
		name            string
		mark            func(*RouteStatus)
		condition       duckv1.ConditionType
		want, wantReady cond
	}{{
		name:      "assigned and routed",
		mark:      func(rs *RouteStatus) { rs.MarkTrafficAssigned(); rs.MarkIngressReady() },
		condition: RouteConditionAllTrafficAssigned,
		want:      cond{Status: corev1.ConditionTrue},
		wantReady: cond{Status: corev1.ConditionTrue},
	}, {
		name: "a target failed",
		mark: func(rs *RouteStatus) {
			rs.MarkIngressReady()
			rs.MarkTrafficNotAssigned(ReasonRevisionFailed, "exit 1")
		},
		condition: RouteConditionAllTrafficAssigned,
		want:      cond{corev1.ConditionFalse, ReasonRevisionFailed, "exit 1"},
		wantReady: cond{corev1.ConditionFalse, ReasonRevisionFailed, "exit 1"},
	}, {
		name: "a target waits",
		mark: func(rs *RouteStatus) {
			rs.MarkIngressReady()
			rs.MarkTrafficPending(ReasonRevisionMissing, "not ready yet")
		},
		condition: RouteConditionAllTrafficAssigned,
		want:      cond{corev1.ConditionUnknown, ReasonRevisionMissing, "not ready yet"},
		wantReady: cond{corev1.ConditionUnknown, ReasonRevisionMissing, "not ready yet"},
	}, {
		name:      "no host",
		mark:      func(rs *RouteStatus) { rs.MarkTrafficAssigned(); rs.MarkDomainTemplateError("bad template") },
		condition: RouteConditionIngressReady,
		want:      cond{corev1.ConditionFalse, ReasonDomainTemplateError, "bad template"},
		wantReady: cond{corev1.ConditionFalse, ReasonDomainTemplateError, "bad template"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := &RouteStatus{}
			rs.InitializeConditions()
			tc.mark(rs)
			if diff := cmp.Diff(&tc.want, condOf(&rs.Status, tc.condition)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.condition, diff)
			}
			if diff := cmp.Diff(&tc.wantReady, condOf(&rs.Status, duckv1.ConditionReady)); diff != "" {
				t.Errorf("Ready (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServiceLifecycle(t *testing.T) {
	withReady := func(c *cond) duckv1.Status {
		var s duckv1.Status
		if c != nil {
			s.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: c.Status, Reason: c.Reason, Message: c.Message}}
		}
		return s
	}
	cfgReady := &ConfigurationStatus{Status: withReady(&cond{Status: corev1.ConditionTrue})}
	rtReady := &RouteStatus{Status: withReady(&cond{Status: corev1.ConditionTrue})}
	tests := []struct {
		name          string
		mark          func(*ServiceStatus)
		cfg, rt, want cond
	}{{
		name: "both children ready",
		mark: func(ss *ServiceStatus) { ss.PropagateConfigurationStatus(cfgReady); ss.PropagateRouteStatus(rtReady) },
		cfg:  cond{Status: corev1.ConditionTrue}, rt: cond{Status: corev1.ConditionTrue}, want: cond{Status: corev1.ConditionTrue},
	}, {
		name: "the Configuration failed",
		mark: func(ss *ServiceStatus) {
			ss.PropagateConfigurationStatus(&ConfigurationStatus{Status: withReady(&cond{corev1.ConditionFalse, ReasonRevisionFailed, "exit 1"})})
			ss.PropagateRouteStatus(rtReady)
		},
		cfg:  cond{corev1.ConditionFalse, ReasonRevisionFailed, "exit 1"},
		rt:   cond{Status: corev1.ConditionTrue},
		want: cond{corev1.ConditionFalse, ReasonRevisionFailed, "exit 1"},
	}, {
		name: "the Route waits; a child without Ready is Pending",
		mark: func(ss *ServiceStatus) {
			ss.PropagateConfigurationStatus(&ConfigurationStatus{})
			ss.PropagateRouteStatus(&RouteStatus{Status: withReady(&cond{corev1.ConditionUnknown, ReasonRevisionMissing, "not ready yet"})})
		},
		cfg:  cond{Status: corev1.ConditionUnknown, Reason: ReasonPending},
		rt:   cond{corev1.ConditionUnknown, ReasonRevisionMissing, "not ready yet"},
		want: cond{Status: corev1.ConditionUnknown, Reason: ReasonPending},
	}, {
		name: "children out of date",
		mark: func(ss *ServiceStatus) { ss.MarkConfigurationNotYetReady(); ss.MarkRouteNotYetReady() },
		cfg:  cond{corev1.ConditionUnknown, ReasonOutOfDate, "waiting for the latest spec to be observed"},
		rt:   cond{corev1.ConditionUnknown, ReasonOutOfDate, "waiting for the latest spec to be observed"},
		want: cond{corev1.ConditionUnknown, ReasonOutOfDate, "waiting for the latest spec to be observed"},
	}, {
		name: "children that cannot be written",
		mark: func(ss *ServiceStatus) {
			ss.MarkConfigurationsReadyFalse("NotOwned", "taken")
			ss.MarkRoutesReadyUnknown(ReasonReconcileError, "timeout")
		},
		cfg:  cond{corev1.ConditionFalse, "NotOwned", "taken"},
		rt:   cond{corev1.ConditionUnknown, ReasonReconcileError, "timeout"},
		want: cond{corev1.ConditionFalse, "NotOwned", "taken"},
	}, {
		name: "a Route that cannot be written",
		mark: func(ss *ServiceStatus) {
			ss.MarkConfigurationsReadyUnknown(ReasonReconcileError, "timeout")
			ss.MarkRoutesReadyFalse("FailedCreate", "denied")
		},
		cfg:  cond{corev1.ConditionUnknown, ReasonReconcileError, "timeout"},
		rt:   cond{corev1.ConditionFalse, "FailedCreate", "denied"},
		want: cond{corev1.ConditionFalse, "FailedCreate", "denied"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ss := &ServiceStatus{}
			ss.InitializeConditions()
			tc.mark(ss)
			for _, c := range []struct {
				t    duckv1.ConditionType
				want cond
			}{{ServiceConditionConfigurationsReady, tc.cfg}, {ServiceConditionRoutesReady, tc.rt}, {duckv1.ConditionReady, tc.want}} {
				if diff := cmp.Diff(&c.want, condOf(&ss.Status, c.t)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", c.t, diff)
				}
			}
		})
	}
}
