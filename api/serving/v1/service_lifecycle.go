package v1

import duckv1 "github.com/knitops/knit/api/duck/v1"

// The Service's transitions: ConfigurationsReady and RoutesReady mirror
// its two children, or say why a child cannot be written.

// InitializeConditions shows every condition the Service owns, Unknown
// where it has none yet.
func (ss *ServiceStatus) InitializeConditions() {
	ServiceConditions.Manage(&ss.Status).InitializeConditions()
}

// MarkConfigurationsReadyFalse: the Configuration cannot be written (its
// name is taken, the API server refuses it) or it failed.
func (ss *ServiceStatus) MarkConfigurationsReadyFalse(reason, message string) {
	ServiceConditions.Manage(&ss.Status).MarkFalse(ServiceConditionConfigurationsReady, reason, message)
}

// MarkConfigurationsReadyUnknown: the Configuration could not be read or
// written this time; the next pass retries.
func (ss *ServiceStatus) MarkConfigurationsReadyUnknown(reason, message string) {
	ServiceConditions.Manage(&ss.Status).MarkUnknown(ServiceConditionConfigurationsReady, reason, message)
}

// MarkConfigurationNotYetReady: the Configuration has not observed the
// Service's latest template.
func (ss *ServiceStatus) MarkConfigurationNotYetReady() {
	ss.MarkConfigurationsReadyUnknown(ReasonOutOfDate, outOfDateMessage)
}

// PropagateConfigurationStatus mirrors the Configuration's Ready on
// ConfigurationsReady.
func (ss *ServiceStatus) PropagateConfigurationStatus(cs *ConfigurationStatus) {
	propagateReady(ServiceConditions.Manage(&ss.Status), ServiceConditionConfigurationsReady, &cs.Status)
}

// MarkRoutesReadyFalse: the Route cannot be written or it failed.
func (ss *ServiceStatus) MarkRoutesReadyFalse(reason, message string) {
	ServiceConditions.Manage(&ss.Status).MarkFalse(ServiceConditionRoutesReady, reason, message)
}

// MarkRoutesReadyUnknown: the Route could not be read or written this
// time; the next pass retries.
func (ss *ServiceStatus) MarkRoutesReadyUnknown(reason, message string) {
	ServiceConditions.Manage(&ss.Status).MarkUnknown(ServiceConditionRoutesReady, reason, message)
}

// MarkRouteNotYetReady: the Route has not observed its latest spec.
func (ss *ServiceStatus) MarkRouteNotYetReady() {
	ss.MarkRoutesReadyUnknown(ReasonOutOfDate, outOfDateMessage)
}

// PropagateRouteStatus mirrors the Route's Ready on RoutesReady.
func (ss *ServiceStatus) PropagateRouteStatus(rs *RouteStatus) {
	propagateReady(ServiceConditions.Manage(&ss.Status), ServiceConditionRoutesReady, &rs.Status)
}

const outOfDateMessage = "waiting for the latest spec to be observed"

// propagateReady copies child's Ready onto t: True, False or Unknown with
// the child's reason and message, Pending while it has none.
func propagateReady(conds duckv1.ConditionManager, t duckv1.ConditionType, child *duckv1.Status) {
	ready := child.GetCondition(duckv1.ConditionReady)
	switch {
	case ready.IsTrue():
		conds.MarkTrue(t)
	case ready.IsFalse():
		conds.MarkFalse(t, ready.Reason, ready.Message)
	case ready != nil:
		conds.MarkUnknown(t, ready.Reason, ready.Message)
	default:
		conds.MarkUnknown(t, ReasonPending, "")
	}
}
