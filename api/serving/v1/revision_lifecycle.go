package v1

// The Revision's transitions, Knative's revision_lifecycle.go: the
// reconciler says what happened, the condition set derives Ready.

// InitializeConditions shows every condition the Revision owns, Unknown
// where it has none yet.
func (rs *RevisionStatus) InitializeConditions() {
	RevisionConditions.Manage(&rs.Status).InitializeConditions()
}

// MarkResourcesAvailableTrue: the Deployment runs ready replicas (or did,
// before the Revision scaled to zero).
func (rs *RevisionStatus) MarkResourcesAvailableTrue() {
	RevisionConditions.Manage(&rs.Status).MarkTrue(RevisionConditionResourcesAvailable)
}

// MarkResourcesAvailableFalse: the Revision's children cannot run or be
// reached; reason and message are the child's or the API server's.
func (rs *RevisionStatus) MarkResourcesAvailableFalse(reason, message string) {
	RevisionConditions.Manage(&rs.Status).MarkFalse(RevisionConditionResourcesAvailable, reason, message)
}

// MarkContainerHealthyTrue: the app started and passed readiness.
func (rs *RevisionStatus) MarkContainerHealthyTrue() {
	RevisionConditions.Manage(&rs.Status).MarkTrue(RevisionConditionContainerHealthy)
}

// MarkContainerHealthyFalse: the app's replicas fail (the Deployment's
// ReplicaFailure reason and message, such as CrashLoopBackOff).
func (rs *RevisionStatus) MarkContainerHealthyFalse(reason, message string) {
	RevisionConditions.Manage(&rs.Status).MarkFalse(RevisionConditionContainerHealthy, reason, message)
}

// MarkDeploying: the replicas are starting; message says how many the
// Revision waits for.
func (rs *RevisionStatus) MarkDeploying(message string) {
	conds := RevisionConditions.Manage(&rs.Status)
	conds.MarkUnknown(RevisionConditionResourcesAvailable, ReasonDeploying, message)
	conds.MarkUnknown(RevisionConditionContainerHealthy, ReasonDeploying, message)
}

// MarkActiveTrue: the Revision has replicas taking requests.
func (rs *RevisionStatus) MarkActiveTrue() {
	RevisionConditions.Manage(&rs.Status).MarkTrue(RevisionConditionActive)
}

// MarkActiveFalse: the Revision is scaled to zero (the PodAutoscaler's
// reason); informational, Ready stays as it is.
func (rs *RevisionStatus) MarkActiveFalse(reason, message string) {
	RevisionConditions.Manage(&rs.Status).MarkFalse(RevisionConditionActive, reason, message)
}

// MarkActiveUnknown: the Revision is activating or not yet scaled.
func (rs *RevisionStatus) MarkActiveUnknown(reason, message string) {
	RevisionConditions.Manage(&rs.Status).MarkUnknown(RevisionConditionActive, reason, message)
}
