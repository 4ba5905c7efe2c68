package v1

// The Route's transitions: AllTrafficAssigned says whether every target
// resolved to a ready Revision, IngressReady whether the route has its
// hosts.

// InitializeConditions shows every condition the Route owns, Unknown
// where it has none yet.
func (rs *RouteStatus) InitializeConditions() {
	RouteConditions.Manage(&rs.Status).InitializeConditions()
}

// MarkTrafficAssigned: every target names a ready Revision.
func (rs *RouteStatus) MarkTrafficAssigned() {
	RouteConditions.Manage(&rs.Status).MarkTrue(RouteConditionAllTrafficAssigned)
}

// MarkTrafficNotAssigned: a target cannot be resolved and needs the user
// (ReasonConfigurationMissing, ReasonRevisionMissing, ReasonRevisionFailed).
func (rs *RouteStatus) MarkTrafficNotAssigned(reason, message string) {
	RouteConditions.Manage(&rs.Status).MarkFalse(RouteConditionAllTrafficAssigned, reason, message)
}

// MarkTrafficPending: a target waits for its Revision to become ready;
// the previous traffic keeps serving meanwhile.
func (rs *RouteStatus) MarkTrafficPending(reason, message string) {
	RouteConditions.Manage(&rs.Status).MarkUnknown(RouteConditionAllTrafficAssigned, reason, message)
}

// MarkIngressReady: the route and its tags have their URLs.
func (rs *RouteStatus) MarkIngressReady() {
	RouteConditions.Manage(&rs.Status).MarkTrue(RouteConditionIngressReady)
}

// MarkDomainTemplateError: config-network's templates give no valid host;
// message is the template's error.
func (rs *RouteStatus) MarkDomainTemplateError(message string) {
	RouteConditions.Manage(&rs.Status).MarkFalse(RouteConditionIngressReady, ReasonDomainTemplateError, message)
}
