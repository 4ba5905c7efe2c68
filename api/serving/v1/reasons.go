package v1

// Reasons the serving reconcilers give their conditions, so that what
// kubectl's REASON column shows is spelled once. A condition that passes
// on a child's failure (a Deployment's ProgressDeadlineExceeded, an SKS's
// FailedCreate) keeps the child's reason instead.
const (
	// ReasonDeploying: a Revision's replicas, or the Revision a
	// Configuration stamped, are not ready yet.
	ReasonDeploying = "Deploying"
	// ReasonRevisionFailed: the Revision a Configuration stamped, or one a
	// Route sends traffic to, is not Ready.
	ReasonRevisionFailed = "RevisionFailed"
	// ReasonRevisionNameTaken: the Revision a Configuration's template
	// names exists and is not the one it would stamp.
	ReasonRevisionNameTaken = "RevisionNameTaken"
	// ReasonRevisionMissing: a Route's target has no Revision (yet).
	ReasonRevisionMissing = "RevisionMissing"
	// ReasonConfigurationMissing: a Route follows a Configuration that
	// does not exist.
	ReasonConfigurationMissing = "ConfigurationMissing"
	// ReasonDomainTemplateError: config-network's templates give the Route
	// no valid host.
	ReasonDomainTemplateError = "DomainTemplateError"
	// ReasonReconcileError: the Service could not read or write a child
	// for a reason worth retrying.
	ReasonReconcileError = "ReconcileError"
	// ReasonOutOfDate: the Service's child has not seen its latest spec.
	ReasonOutOfDate = "OutOfDate"
	// ReasonPending: a child has no Ready condition yet.
	ReasonPending = "Pending"
	// ReasonContainerMissing: a Revision's image tag could not be
	// resolved to a digest (no such image, or no access to it).
	ReasonContainerMissing = "ContainerMissing"
)
