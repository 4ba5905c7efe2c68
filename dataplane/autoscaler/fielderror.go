package autoscaler

import "fmt"

// Sources of a FieldError, so a message says where the bad value was written.
const (
	SourceConfig     = "config-autoscaler"
	SourceAnnotation = "annotation"
)

// FieldError reports one rejected setting: where it came from, its key, the
// value as written and why it was rejected. It is a type, not a string, so the
// admission webhook and the PodAutoscaler reconciler can point at the exact
// key (errors.As) while users still read one clear line.
type FieldError struct {
	Source string // SourceConfig or SourceAnnotation
	Key    string
	Value  string
	Reason string
}

// Error reads like `config-autoscaler max-scale-up-rate="1": must be greater than 1`.
func (e *FieldError) Error() string {
	return fmt.Sprintf("%s %s=%q: %s", e.Source, e.Key, e.Value, e.Reason)
}
