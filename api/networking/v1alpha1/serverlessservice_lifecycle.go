package v1alpha1

// Reasons the ServerlessService reconciler gives its conditions; a child
// Service that cannot be written shows the API server's reason instead.
const (
	// ReasonNoActivatorEndpoints: no activator has published endpoints.
	ReasonNoActivatorEndpoints = "NoActivatorEndpoints"
	// ReasonActivatorEndpoints: requests reach the Revision through the
	// activators (Proxy mode, or no replica ready).
	ReasonActivatorEndpoints = "ActivatorEndpoints"
	// ReasonNoHealthyBackends: neither replicas nor activators are ready.
	ReasonNoHealthyBackends = "NoHealthyBackends"
)

// InitializeConditions shows every condition the SKS owns, Unknown where
// it has none yet.
func (ss *ServerlessServiceStatus) InitializeConditions() {
	ServerlessServiceConditions.Manage(&ss.Status).InitializeConditions()
}

// MarkEndpointsReady: the public Service has the replicas' endpoints.
func (ss *ServerlessServiceStatus) MarkEndpointsReady() {
	ServerlessServiceConditions.Manage(&ss.Status).MarkTrue(SKSConditionEndpointsPopulated)
}

// MarkEndpointsFromActivators: the public Service has the activators'
// endpoints; message says how many, in which mode.
func (ss *ServerlessServiceStatus) MarkEndpointsFromActivators(message string) {
	ServerlessServiceConditions.Manage(&ss.Status).MarkTrueWithReason(SKSConditionEndpointsPopulated, ReasonActivatorEndpoints, message)
}

// MarkNoHealthyBackends: the public Service has no endpoint to send to.
func (ss *ServerlessServiceStatus) MarkNoHealthyBackends() {
	ServerlessServiceConditions.Manage(&ss.Status).MarkUnknown(SKSConditionEndpointsPopulated, ReasonNoHealthyBackends,
		"neither replicas nor activators have ready endpoints")
}

// MarkEndpointsFailed: a Service the SKS owns cannot be written; reason
// and message are the API server's (an exhausted service range).
func (ss *ServerlessServiceStatus) MarkEndpointsFailed(reason, message string) {
	ServerlessServiceConditions.Manage(&ss.Status).MarkFalse(SKSConditionEndpointsPopulated, reason, message)
}

// MarkActivatorEndpointsPopulated: activators are known (informational).
func (ss *ServerlessServiceStatus) MarkActivatorEndpointsPopulated() {
	ServerlessServiceConditions.Manage(&ss.Status).MarkTrue(SKSConditionActivatorEndpointsPopulated)
}

// MarkActivatorEndpointsRemoved: no activator is known (informational).
func (ss *ServerlessServiceStatus) MarkActivatorEndpointsRemoved() {
	ServerlessServiceConditions.Manage(&ss.Status).MarkFalse(SKSConditionActivatorEndpointsPopulated, ReasonNoActivatorEndpoints,
		"no activator endpoints are published")
}
