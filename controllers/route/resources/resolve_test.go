package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func withReady(status corev1.ConditionStatus, message string) duckv1.Status {
	return duckv1.Status{Conditions: duckv1.Conditions{{Type: duckv1.ConditionReady, Status: status, Message: message}}}
}

func TestResolveTraffic(t *testing.T) {
	rev := func(name string, status corev1.ConditionStatus, message string) *servingv1.Revision {
		r := &servingv1.Revision{}
		r.Name, r.Status.Status = name, withReady(status, message)
		return r
	}
	cfg := func(name, latestReady string, ready corev1.ConditionStatus, message string) *servingv1.Configuration {
		c := &servingv1.Configuration{}
		c.Name, c.Status.LatestReadyRevisionName, c.Status.Status = name, latestReady, withReady(ready, message)
		return c
	}
	snap := Snapshot{
		Configurations: map[string]*servingv1.Configuration{
			"hello":    cfg("hello", "hello-00002", corev1.ConditionTrue, ""),
			"new":      cfg("new", "", corev1.ConditionUnknown, ""),
			"broken":   cfg("broken", "", corev1.ConditionFalse, "exit 1"),
			"vanished": cfg("vanished", "vanished-00001", corev1.ConditionTrue, ""),
		},
		Revisions: map[string]*servingv1.Revision{
			"hello-00001":  rev("hello-00001", corev1.ConditionTrue, ""),
			"hello-00002":  rev("hello-00002", corev1.ConditionTrue, ""),
			"failed-00001": rev("failed-00001", corev1.ConditionFalse, "CrashLoopBackOff"),
			"slow-00001":   rev("slow-00001", corev1.ConditionUnknown, ""),
		},
	}
	pct := func(p int64) *int64 { return ptr.To(p) }
	tests := []struct {
		name string
		spec []servingv1.TrafficTarget
		want []servingv1.TrafficTarget
		err  *TrafficError
	}{{
		name: "a Configuration's latest ready Revision",
		spec: []servingv1.TrafficTarget{{ConfigurationName: "hello", LatestRevision: ptr.To(true), Percent: pct(100)}},
		want: []servingv1.TrafficTarget{{RevisionName: "hello-00002", LatestRevision: ptr.To(true), Percent: pct(100)}},
	}, {
		name: "a split with a pinned Revision and a tag",
		spec: []servingv1.TrafficTarget{
			{ConfigurationName: "hello", Percent: pct(90)},
			{RevisionName: "hello-00001", LatestRevision: ptr.To(false), Percent: pct(10), Tag: "stable"},
		},
		want: []servingv1.TrafficTarget{
			{RevisionName: "hello-00002", LatestRevision: ptr.To(true), Percent: pct(90)},
			{RevisionName: "hello-00001", LatestRevision: ptr.To(false), Percent: pct(10), Tag: "stable"},
		},
	}, {
		name: "a Configuration not found",
		spec: []servingv1.TrafficTarget{{ConfigurationName: "missing"}},
		err:  &TrafficError{Reason: servingv1.ReasonConfigurationMissing, Message: `Configuration "missing" referenced in traffic not found`},
	}, {
		name: "a Configuration still waiting for its first Revision",
		spec: []servingv1.TrafficTarget{{ConfigurationName: "new"}},
		err:  &TrafficError{Reason: servingv1.ReasonRevisionMissing, Message: `Configuration "new" is waiting for a Revision to become ready`, Unknown: true},
	}, {
		name: "a Configuration whose only Revision failed",
		spec: []servingv1.TrafficTarget{{ConfigurationName: "broken"}},
		err:  &TrafficError{Reason: servingv1.ReasonRevisionMissing, Message: `Configuration "broken" does not have any ready Revision: exit 1`},
	}, {
		name: "a latest ready Revision since deleted",
		spec: []servingv1.TrafficTarget{{ConfigurationName: "vanished"}},
		err:  &TrafficError{Reason: servingv1.ReasonRevisionMissing, Message: `Revision "vanished-00001" referenced in traffic not found`},
	}, {
		name: "a pinned Revision that failed",
		spec: []servingv1.TrafficTarget{{RevisionName: "failed-00001", LatestRevision: ptr.To(false)}},
		err:  &TrafficError{Reason: servingv1.ReasonRevisionFailed, Message: `Revision "failed-00001" failed: CrashLoopBackOff`},
	}, {
		name: "a pinned Revision not ready yet",
		spec: []servingv1.TrafficTarget{{RevisionName: "slow-00001", LatestRevision: ptr.To(false)}},
		err:  &TrafficError{Reason: servingv1.ReasonRevisionMissing, Message: `Revision "slow-00001" is not ready yet`, Unknown: true},
	}, {
		name: "a wait, then a failure: the failure needs the user first",
		spec: []servingv1.TrafficTarget{{RevisionName: "slow-00001", LatestRevision: ptr.To(false)}, {ConfigurationName: "missing"}},
		err:  &TrafficError{Reason: servingv1.ReasonConfigurationMissing, Message: `Configuration "missing" referenced in traffic not found`},
	}, {
		name: "two waits: the first is reported",
		spec: []servingv1.TrafficTarget{{ConfigurationName: "new"}, {RevisionName: "slow-00001"}},
		err:  &TrafficError{Reason: servingv1.ReasonRevisionMissing, Message: `Configuration "new" is waiting for a Revision to become ready`, Unknown: true},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveTraffic(tc.spec, snap)
			if diff := cmp.Diff(tc.err, err); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); err == nil && diff != "" {
				t.Errorf("traffic (-want +got):\n%s", diff)
			}
		})
	}
}
