package v1beta1

// Reasons of the DomainMapping's conditions, Knative's where Knative has
// one, so tools written for Knative read them the same.
const (
	// ReasonDomainAlreadyClaimed: another namespace holds the domain's
	// ClusterDomainClaim.
	ReasonDomainAlreadyClaimed = "DomainAlreadyClaimed"
	// ReasonDomainClaimFailed: no claim exists and none may be made.
	ReasonDomainClaimFailed = "DomainClaimFailed"
	// ReasonResolveFailed: spec.ref names nothing the ingress can serve.
	ReasonResolveFailed = "ResolveFailed"
	// ReasonTLSNotEnabled: the domain gets no certificate.
	ReasonTLSNotEnabled = "TLSNotEnabled"
	// ReasonCertificateExternallyProvided: spec.tls names the certificate.
	ReasonCertificateExternallyProvided = "CertificateExternallyProvided"
	// ReasonCertificateNotReady: a certificate is being obtained or copied.
	ReasonCertificateNotReady = "CertificateNotReady"
)

// InitializeConditions shows every condition the DomainMapping owns,
// Unknown where it has none yet.
func (s *DomainMappingStatus) InitializeConditions() {
	DomainMappingConditions.Manage(&s.Status).InitializeConditions()
}

// MarkDomainClaimed: this namespace holds the domain.
func (s *DomainMappingStatus) MarkDomainClaimed() {
	DomainMappingConditions.Manage(&s.Status).MarkTrue(DomainMappingConditionDomainClaimed)
}

// MarkDomainClaimNotOwned: another namespace's ClusterDomainClaim holds
// the domain.
func (s *DomainMappingStatus) MarkDomainClaimNotOwned(owner string) {
	DomainMappingConditions.Manage(&s.Status).MarkFalse(DomainMappingConditionDomainClaimed, ReasonDomainAlreadyClaimed,
		"The domain name is already in use by another DomainMapping (its ClusterDomainClaim names namespace "+owner+")")
}

// MarkDomainClaimFailed: no claim exists and config-network does not
// let knit make one; message says what to do.
func (s *DomainMappingStatus) MarkDomainClaimFailed(message string) {
	DomainMappingConditions.Manage(&s.Status).MarkFalse(DomainMappingConditionDomainClaimed, ReasonDomainClaimFailed, message)
}

// MarkReferenceResolved: spec.ref names a Route the ingress serves.
func (s *DomainMappingStatus) MarkReferenceResolved() {
	DomainMappingConditions.Manage(&s.Status).MarkTrue(DomainMappingConditionReferenceResolved)
}

// MarkReferenceNotResolved: spec.ref cannot be served; message says why.
func (s *DomainMappingStatus) MarkReferenceNotResolved(message string) {
	DomainMappingConditions.Manage(&s.Status).MarkFalse(DomainMappingConditionReferenceResolved, ReasonResolveFailed, message)
}

// MarkIngressReady: the ingress serves the domain.
func (s *DomainMappingStatus) MarkIngressReady() {
	DomainMappingConditions.Manage(&s.Status).MarkTrue(DomainMappingConditionIngressReady)
}

// MarkIngressNotConfigured: the ingress does not serve the domain until
// the conditions before it are met.
func (s *DomainMappingStatus) MarkIngressNotConfigured(reason, message string) {
	DomainMappingConditions.Manage(&s.Status).MarkUnknown(DomainMappingConditionIngressReady, reason, message)
}

// MarkTLSNotEnabled: no certificate for the domain; message says why.
func (s *DomainMappingStatus) MarkTLSNotEnabled(message string) {
	DomainMappingConditions.Manage(&s.Status).MarkTrueWithReason(DomainMappingConditionCertificateProvisioned, ReasonTLSNotEnabled, message)
}

// MarkCertificateExternallyProvided: spec.tls's Secret serves the domain.
func (s *DomainMappingStatus) MarkCertificateExternallyProvided(secret string) {
	DomainMappingConditions.Manage(&s.Status).MarkTrueWithReason(DomainMappingConditionCertificateProvisioned,
		ReasonCertificateExternallyProvided, "TLS certificate was provided externally in Secret "+secret)
}

// MarkCertificateReady: a certificate knit obtained serves the domain.
func (s *DomainMappingStatus) MarkCertificateReady(secret string) {
	DomainMappingConditions.Manage(&s.Status).MarkTrueWithReason(DomainMappingConditionCertificateProvisioned,
		"CertificateReady", "certificate in Secret "+secret)
}

// MarkCertificateNotReady: a certificate is on its way; message says
// what serves meanwhile.
func (s *DomainMappingStatus) MarkCertificateNotReady(reason, message string) {
	DomainMappingConditions.Manage(&s.Status).MarkUnknown(DomainMappingConditionCertificateProvisioned, reason, message)
}

// MarkCertificateProvisionFailed: the certificate cannot be had; reason
// and message say why and what serves meanwhile.
func (s *DomainMappingStatus) MarkCertificateProvisionFailed(reason, message string) {
	DomainMappingConditions.Manage(&s.Status).MarkFalse(DomainMappingConditionCertificateProvisioned, reason, message)
}

// Served says whether the ingress may serve dm's domain: its controller
// has seen this generation, claimed the domain for this namespace and
// resolved spec.ref. The ingress reads nothing else of its status.
func (dm *DomainMapping) Served() bool {
	s := &dm.Status
	return s.ObservedGeneration == dm.Generation &&
		s.GetCondition(DomainMappingConditionDomainClaimed).IsTrue() &&
		s.GetCondition(DomainMappingConditionReferenceResolved).IsTrue()
}
