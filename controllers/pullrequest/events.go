package pullrequest

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/controllers/transition"
)

// canaryAction is the events.k8s.io action of the canary's Events.
const canaryAction = "Canary"

// canaryEvent is the Event a canary's move from before to after records,
// for `kubectl describe pr`: a step starting (CanaryStep, the first one
// once the preview is ready, each later one after its predecessor passed,
// and step 1 again after a push), the canary promoted or rolled back, its
// plan refused. A pass that changes nothing of these (an inconclusive
// window, a resync) records nothing.
func canaryEvent(before, after *knitv1alpha1.CanaryStatus) (transition.Event, bool) {
	if after == nil {
		return transition.Event{}, false
	}
	moved := before == nil || before.Phase != after.Phase || before.Commit != after.Commit
	switch after.Phase {
	case knitv1alpha1.CanaryProgressing:
		if after.Step == 0 || !moved && before.Step == after.Step {
			return transition.Event{}, false
		}
		note := fmt.Sprintf("step %d of %d: %d%% of the base's traffic to commit %.7s", after.Step, len(after.Steps), after.Percent, after.Commit)
		if after.Message != "" {
			note += "; " + after.Message
		}
		return transition.Event{Type: corev1.EventTypeNormal, Reason: "CanaryStep", Note: note}, true
	case knitv1alpha1.CanaryPromoted:
		if moved {
			return transition.Event{Type: corev1.EventTypeNormal, Reason: "CanaryPromoted", Note: "every step passed; " + after.Message}, true
		}
	case knitv1alpha1.CanaryRolledBack:
		if moved {
			return transition.Event{Type: corev1.EventTypeWarning, Reason: "CanaryRolledBack", Note: "the head gets no traffic; " + after.Message}, true
		}
	case knitv1alpha1.CanaryInvalid:
		if moved {
			return transition.Event{Type: corev1.EventTypeWarning, Reason: "CanaryInvalid", Note: after.Message}, true
		}
	}
	return transition.Event{}, false
}
