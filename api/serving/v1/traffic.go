package v1

// TrafficTarget sends a share of a Route's requests to one Revision, or to
// whatever Revision is latest in a Configuration, optionally under its own
// tag URL.
type TrafficTarget struct {
	// Tag gives this target its own URL, <tag>-<route>.<namespace>.<domain>.
	// +optional
	Tag string `json:"tag,omitempty"`
	// RevisionName pins the target to one Revision.
	// +optional
	RevisionName string `json:"revisionName,omitempty"`
	// ConfigurationName follows the latest ready Revision of a
	// Configuration; a Service sets it for its own.
	// +optional
	ConfigurationName string `json:"configurationName,omitempty"`
	// LatestRevision says whether the target follows the latest ready
	// Revision (true) or the pinned RevisionName (false).
	// +optional
	LatestRevision *bool `json:"latestRevision,omitempty"`
	// Percent of the Route's traffic this target receives; targets' percents
	// add up to 100.
	// +optional
	Percent *int64 `json:"percent,omitempty"`
	// URL is where the tagged target is reached; set in status only.
	// +optional
	URL string `json:"url,omitempty"`
}

// RouteSpec is the traffic split; a Service carries it inline.
type RouteSpec struct {
	// Traffic targets of the route.
	// +optional
	Traffic []TrafficTarget `json:"traffic,omitempty"`
}
