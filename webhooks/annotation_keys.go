package webhooks

import (
	"slices"
	"strings"

	"github.com/knitops/knit/api/autoscaling"
)

// unknownAutoscalingAnnotations warns about autoscaling.knative.dev/ keys
// knit does not know, in sorted order: Knative passes them through, and so
// does knit, but a typo there silently does nothing.
func unknownAutoscalingAnnotations(anns map[string]string) []string {
	var warnings []string
	for key := range anns {
		if strings.HasPrefix(key, autoscaling.Prefix) && !autoscaling.IsKnown(key) {
			warnings = append(warnings, "unknown annotation "+key+" is ignored")
		}
	}
	slices.Sort(warnings)
	return warnings
}
