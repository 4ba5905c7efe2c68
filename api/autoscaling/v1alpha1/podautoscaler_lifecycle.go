package v1alpha1

// Reasons the PodAutoscaler reconciler gives its conditions; SKSReady
// passes on the SKS's own reason when it is not ready.
const (
	// ReasonNoTraffic: the Revision was scaled to zero on purpose.
	ReasonNoTraffic = "NoTraffic"
	// ReasonActivating: the Revision was scaled up again and waits for
	// its replicas.
	ReasonActivating = "Activating"
	// ReasonQueued: the Revision waits for its first replica.
	ReasonQueued = "Queued"
	// ReasonScaleTargetMissing: the Deployment to scale does not exist yet.
	ReasonScaleTargetMissing = "ScaleTargetMissing"
	// ReasonPending: the SKS has no Ready condition yet.
	ReasonPending = "Pending"
)

// InitializeConditions shows every condition the PodAutoscaler owns,
// Unknown where it has none yet.
func (ps *PodAutoscalerStatus) InitializeConditions() {
	PodAutoscalerConditions.Manage(&ps.Status).InitializeConditions()
}

// MarkActive: replicas are ready to take requests.
func (ps *PodAutoscalerStatus) MarkActive() {
	PodAutoscalerConditions.Manage(&ps.Status).MarkTrue(PodAutoscalerConditionActive)
}

// MarkInactive: the Revision is at zero (ReasonNoTraffic); the activator
// wakes it.
func (ps *PodAutoscalerStatus) MarkInactive(reason, message string) {
	PodAutoscalerConditions.Manage(&ps.Status).MarkFalse(PodAutoscalerConditionActive, reason, message)
}

// MarkActivating: replicas are wanted and not ready yet (ReasonActivating,
// ReasonQueued).
func (ps *PodAutoscalerStatus) MarkActivating(reason, message string) {
	PodAutoscalerConditions.Manage(&ps.Status).MarkUnknown(PodAutoscalerConditionActive, reason, message)
}

// MarkScaleTargetInitialized: the Deployment had ready replicas once.
func (ps *PodAutoscalerStatus) MarkScaleTargetInitialized() {
	PodAutoscalerConditions.Manage(&ps.Status).MarkTrue(PodAutoscalerConditionScaleTargetInitialized)
}

// MarkScaleTargetNotInitialized: the Deployment is missing or has never
// had a ready replica (ReasonScaleTargetMissing, ReasonQueued).
func (ps *PodAutoscalerStatus) MarkScaleTargetNotInitialized(reason, message string) {
	PodAutoscalerConditions.Manage(&ps.Status).MarkUnknown(PodAutoscalerConditionScaleTargetInitialized, reason, message)
}

// MarkSKSReady: the ServerlessService is ready at its generation.
func (ps *PodAutoscalerStatus) MarkSKSReady() {
	PodAutoscalerConditions.Manage(&ps.Status).MarkTrue(PodAutoscalerConditionSKSReady)
}

// MarkSKSFailed: the ServerlessService failed or cannot be written;
// nothing reaches the replicas.
func (ps *PodAutoscalerStatus) MarkSKSFailed(reason, message string) {
	PodAutoscalerConditions.Manage(&ps.Status).MarkFalse(PodAutoscalerConditionSKSReady, reason, message)
}

// MarkSKSNotReady: the ServerlessService is not ready yet.
func (ps *PodAutoscalerStatus) MarkSKSNotReady(reason, message string) {
	PodAutoscalerConditions.Manage(&ps.Status).MarkUnknown(PodAutoscalerConditionSKSReady, reason, message)
}
