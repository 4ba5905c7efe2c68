package v1

// Label and annotation keys, Knative's names so tools written for Knative
// find what they look for.
const (
	// ServiceLabelKey names the Service a Configuration, Route or Revision belongs to.
	ServiceLabelKey = "serving.knative.dev/service"
	// ConfigurationLabelKey names the Configuration a Revision was stamped from.
	ConfigurationLabelKey = "serving.knative.dev/configuration"
	// ConfigurationGenerationLabelKey is the Configuration generation a Revision was stamped from.
	ConfigurationGenerationLabelKey = "serving.knative.dev/configurationGeneration"
	// RevisionLabelKey names the Revision a Deployment or pod serves.
	RevisionLabelKey = "serving.knative.dev/revision"
	// RouteLabelKey names the Route a Revision serves.
	RouteLabelKey = "serving.knative.dev/route"
	// CreatorAnnotation records who created the resource.
	CreatorAnnotation = "serving.knative.dev/creator"
	// UpdaterAnnotation records who last changed the resource's spec.
	UpdaterAnnotation = "serving.knative.dev/lastModifier"
	// VisibilityLabelKey set to cluster-local keeps a route off the external ingress.
	VisibilityLabelKey = "networking.knative.dev/visibility"
)
