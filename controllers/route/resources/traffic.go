// Package resources resolves a Route's traffic; pure functions, no client.
package resources

import (
	"fmt"
	"slices"

	"k8s.io/utils/ptr"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// Snapshot is what traffic resolution reads: the Configurations and
// Revisions a Route references (References), by name.
type Snapshot struct {
	Configurations map[string]*servingv1.Configuration
	Revisions      map[string]*servingv1.Revision
}

// TrafficError says why traffic could not be assigned. Unknown errors are
// waits (a Revision not ready yet); the others need the user.
type TrafficError struct {
	Reason, Message string
	Unknown         bool
}

func (e *TrafficError) Error() string { return e.Reason + ": " + e.Message }

// ResolveTraffic turns spec targets into status targets that each name a
// ready Revision. Targets following a Configuration take its latest ready
// Revision, so a new Revision gets traffic only once it is ready and a
// failed one never takes it from the last good.
func ResolveTraffic(spec []servingv1.TrafficTarget, snap Snapshot) ([]servingv1.TrafficTarget, *TrafficError) {
	out := make([]servingv1.TrafficTarget, 0, len(spec))
	var wait *TrafficError
	for _, t := range spec {
		resolved, err := resolveTarget(t, snap)
		if err != nil && !err.Unknown {
			return nil, err
		}
		if err != nil {
			if wait == nil {
				wait = err
			}
			continue
		}
		out = append(out, resolved)
	}
	if wait != nil {
		return nil, wait
	}
	return out, nil
}

// References names the Configurations and Revisions that resolving spec
// reads, sorted and without repeats: a target following its
// Configuration's latest ready Revision references the Configuration (and,
// through it, whichever Revision is latest ready), any other target the
// Revision it names. They are what a Route is indexed by, so that a change
// to one of them wakes only the Routes that read it.
func References(spec []servingv1.TrafficTarget) (configurations, revisions []string) {
	for _, t := range spec {
		if followsConfiguration(t) {
			configurations = append(configurations, t.ConfigurationName)
		} else if t.RevisionName != "" {
			revisions = append(revisions, t.RevisionName)
		}
	}
	slices.Sort(configurations)
	slices.Sort(revisions)
	return slices.Compact(configurations), slices.Compact(revisions)
}

// followsConfiguration says whether t takes its Configuration's latest
// ready Revision rather than the Revision it names.
func followsConfiguration(t servingv1.TrafficTarget) bool {
	return t.ConfigurationName != "" && (t.LatestRevision == nil || *t.LatestRevision)
}

func resolveTarget(t servingv1.TrafficTarget, snap Snapshot) (servingv1.TrafficTarget, *TrafficError) {
	out := servingv1.TrafficTarget{Tag: t.Tag, Percent: t.Percent, LatestRevision: ptr.To(false)}
	name := t.RevisionName
	if followsConfiguration(t) {
		cfg, ok := snap.Configurations[t.ConfigurationName]
		if !ok {
			return out, &TrafficError{Reason: servingv1.ReasonConfigurationMissing, Message: fmt.Sprintf("Configuration %q referenced in traffic not found", t.ConfigurationName)}
		}
		name = cfg.Status.LatestReadyRevisionName
		if name == "" {
			if c := cfg.Status.GetCondition(duckv1.ConditionReady); c.IsFalse() {
				return out, &TrafficError{Reason: servingv1.ReasonRevisionMissing, Message: fmt.Sprintf("Configuration %q does not have any ready Revision: %s", cfg.Name, c.Message)}
			}
			return out, &TrafficError{Reason: servingv1.ReasonRevisionMissing, Message: fmt.Sprintf("Configuration %q is waiting for a Revision to become ready", cfg.Name), Unknown: true}
		}
		out.LatestRevision = ptr.To(true)
		out.ConfigurationName = ""
	}
	rev, ok := snap.Revisions[name]
	if !ok {
		return out, &TrafficError{Reason: servingv1.ReasonRevisionMissing, Message: fmt.Sprintf("Revision %q referenced in traffic not found", name)}
	}
	ready := rev.Status.GetCondition(duckv1.ConditionReady)
	switch {
	case ready.IsFalse():
		return out, &TrafficError{Reason: servingv1.ReasonRevisionFailed, Message: fmt.Sprintf("Revision %q failed: %s", name, ready.Message)}
	case !ready.IsTrue():
		return out, &TrafficError{Reason: servingv1.ReasonRevisionMissing, Message: fmt.Sprintf("Revision %q is not ready yet", name), Unknown: true}
	}
	out.RevisionName = name
	return out, nil
}

// Active lists the Revisions a Route keeps active: those its resolved
// traffic sends to, and the latest created Revision of each Configuration
// its spec follows, as Knative's labeler does. The latest created one is
// reachable while it starts, before it takes traffic; once a newer one
// supersedes it, it drops out of this list and becomes reserve even if it
// never served, so its PodAutoscaler may take it to zero whatever its
// min-scale.
func Active(spec, resolved []servingv1.TrafficTarget, snap Snapshot) map[string]bool {
	active := Referenced(resolved)
	for _, t := range spec {
		if !followsConfiguration(t) {
			continue
		}
		if cfg, ok := snap.Configurations[t.ConfigurationName]; ok && cfg.Status.LatestCreatedRevisionName != "" {
			active[cfg.Status.LatestCreatedRevisionName] = true
		}
	}
	return active
}

// Referenced lists every Revision the resolved traffic sends to (any
// percent, or tagged), which the GC must never collect.
func Referenced(traffic []servingv1.TrafficTarget) map[string]bool {
	refs := make(map[string]bool, len(traffic))
	for _, t := range traffic {
		if t.RevisionName != "" {
			refs[t.RevisionName] = true
		}
	}
	return refs
}
