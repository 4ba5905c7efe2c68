package v1alpha1

// Labels the ServerlessService reconciler puts on the Services it makes,
// Knative's keys and values. Kubernetes' endpointslice controller (and
// knit dev's runtime) copies a Service's labels onto its EndpointSlices,
// so a slice names its SKS and its kind by label: the way from a slice
// back to its SKS and Revision, since a private Service's name may be
// shortened (internal/names) and cannot be parsed.
const (
	// ServerlessServiceLabelKey names the SKS a Service belongs to; an
	// SKS is named for its Revision.
	ServerlessServiceLabelKey = GroupName + "/serverlessservice"
	// ServiceTypeLabelKey says which of an SKS's Services this is.
	ServiceTypeLabelKey = GroupName + "/serviceType"
	// ServiceTypePrivate marks the Service over the replicas themselves.
	ServiceTypePrivate = "Private"
	// ServiceTypePublic marks the Service the ingress routes to.
	ServiceTypePublic = "Public"
)
