// Package podautoscaler reconciles PodAutoscalers: it applies the
// autoscaler's recommendation to the Deployment's replicas within the
// min/max bounds, owns the Revision's ServerlessService and picks its mode,
// and reports Active, ScaleTargetInitialized and SKSReady.
package podautoscaler
