package v1

// Status is the part of status every knit resource has, so generic code
// (waits, printers, the condition set) can work on any of them.
type Status struct {
	// ObservedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions the latest available observations of the resource's state.
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`
	// Annotations is additional status a controller wants to keep.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// GetCondition returns the condition of type t, or nil when there is none.
func (s *Status) GetCondition(t ConditionType) *Condition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// IsReady reports whether the Ready condition is True for the generation
// the controller observed; callers compare ObservedGeneration themselves.
func (s *Status) IsReady() bool {
	return s.GetCondition(ConditionReady).IsTrue()
}

// Addressable is how a resource tells callers inside the cluster where to
// send requests.
type Addressable struct {
	// Name of the address, when a resource has more than one.
	// +optional
	Name *string `json:"name,omitempty"`
	// URL of the address.
	// +optional
	URL string `json:"url,omitempty"`
}
