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

// ReasonIngressNotConfigured is Knative's reason while the ingress has
// not yet been programmed with what the Route's status says.
const ReasonIngressNotConfigured = "IngressNotConfigured"

// MarkIngressNotProgrammed: the ingress does not serve the route as its
// status says yet; it will (the reconciler looks again shortly).
func (rs *RouteStatus) MarkIngressNotProgrammed() {
	RouteConditions.Manage(&rs.Status).MarkUnknown(RouteConditionIngressReady, ReasonIngressNotConfigured,
		"the ingress has not yet loaded the Route's traffic")
}

// ReasonRolloutInProgress is Knative's reason while a gradual rollout
// moves a target to its Configuration's new Revision.
const ReasonRolloutInProgress = "RolloutInProgress"

// MarkIngressRolloutInProgress: the ingress serves a split on the way to
// the latest Revision(s), not yet the spec's traffic; the Route is not
// Ready until the rollout ends, as in Knative.
func (rs *RouteStatus) MarkIngressRolloutInProgress() {
	RouteConditions.Manage(&rs.Status).MarkUnknown(RouteConditionIngressReady, ReasonRolloutInProgress,
		"a gradual rollout of the latest Revision(s) is in progress")
}

// MarkIngressNotConfigured: the route's in-cluster address cannot be
// made (its placeholder Service's name is taken, or the write refused);
// reason and message are the write's.
func (rs *RouteStatus) MarkIngressNotConfigured(reason, message string) {
	RouteConditions.Manage(&rs.Status).MarkFalse(RouteConditionIngressReady, reason, message)
}

// MarkDomainTemplateError: config-network's templates give no valid host;
// message is the template's error.
func (rs *RouteStatus) MarkDomainTemplateError(message string) {
	RouteConditions.Manage(&rs.Status).MarkFalse(RouteConditionIngressReady, ReasonDomainTemplateError, message)
}

// Reasons of CertificateProvisioned, Knative's where Knative has one.
const (
	// ReasonTLSNotEnabled: external-domain-tls is off for this route.
	ReasonTLSNotEnabled = "TLSNotEnabled"
	// ReasonCertificateNotReady: a certificate is being obtained.
	ReasonCertificateNotReady = "CertificateNotReady"
	// ReasonHTTPDowngrade: no certificate yet, and http-protocol Enabled
	// serves the route over HTTP meanwhile.
	ReasonHTTPDowngrade = "HTTPDowngrade"
)

// MarkTLSNotEnabled: the route gets no certificate, and message says why
// (external-domain-tls off, cluster-local, opted out by annotation).
func (rs *RouteStatus) MarkTLSNotEnabled(message string) {
	RouteConditions.Manage(&rs.Status).MarkTrueWithReason(RouteConditionCertificateProvisioned, ReasonTLSNotEnabled, message)
}

// MarkCertificateReady: secret holds a certificate for every host.
func (rs *RouteStatus) MarkCertificateReady(secret string) {
	RouteConditions.Manage(&rs.Status).MarkTrueWithReason(RouteConditionCertificateProvisioned, "CertificateReady",
		"certificate in Secret "+secret)
}

// MarkCertificateNotReady: a certificate is being obtained; message says
// what serves meanwhile.
func (rs *RouteStatus) MarkCertificateNotReady(reason, message string) {
	RouteConditions.Manage(&rs.Status).MarkUnknown(RouteConditionCertificateProvisioned, reason, message)
}

// MarkCertificateProvisionFailed: the CA refused or could not be reached;
// reason is the ACME failure's (RateLimited, ChallengeFailed, ...), and
// message what the CA said and what serves meanwhile.
func (rs *RouteStatus) MarkCertificateProvisionFailed(reason, message string) {
	RouteConditions.Manage(&rs.Status).MarkFalse(RouteConditionCertificateProvisioned, reason, message)
}
