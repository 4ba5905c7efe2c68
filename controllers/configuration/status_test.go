package configuration

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// revision is a Revision of Configuration hello at generation gen, with
// Ready as given ("" for none), observed at its generation.
func revision(name, gen string, ready corev1.ConditionStatus, message string) servingv1.Revision {
	rev := servingv1.Revision{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Generation: 1,
		Labels: map[string]string{servingv1.ConfigurationLabelKey: "hello", servingv1.ConfigurationGenerationLabelKey: gen}}}
	rev.Status.ObservedGeneration = 1
	if ready != "" {
		rev.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: ready, Reason: "Reason", Message: message}}
	}
	return rev
}

// configuration is Configuration hello at generation gen, its template
// naming named ("" for none), with latestReady as its status says.
func configuration(gen int64, named, latestReady string) *servingv1.Configuration {
	cfg := &servingv1.Configuration{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello", Generation: gen}}
	cfg.Spec.Template.Name = named
	cfg.Status.LatestReadyRevisionName = latestReady
	return cfg
}

func TestMarkStatus(t *testing.T) {
	type want struct {
		LatestCreated, LatestReady string
		Status                     corev1.ConditionStatus
		Reason, Message            string
	}
	ready1 := revision("hello-00001", "1", corev1.ConditionTrue, "")
	ready2 := revision("hello-00002", "2", corev1.ConditionTrue, "")
	tests := []struct {
		name   string
		cfg    *servingv1.Configuration
		latest servingv1.Revision
		revs   []servingv1.Revision
		want   want
	}{{
		name:   "the first Revision deploying",
		cfg:    configuration(1, "", ""),
		latest: revision("hello-00001", "1", "", ""),
		want:   want{"hello-00001", "", corev1.ConditionUnknown, servingv1.ReasonDeploying, `waiting for Revision "hello-00001" to become ready`},
	}, {
		name:   "ready",
		cfg:    configuration(1, "", ""),
		latest: ready1, revs: []servingv1.Revision{ready1},
		want: want{"hello-00001", "hello-00001", corev1.ConditionTrue, "", ""},
	}, {
		name: "ready at an older generation of the Revision is not ready yet",
		cfg:  configuration(1, "", ""),
		latest: func() servingv1.Revision {
			r := ready1.DeepCopy()
			r.Generation = 2
			return *r
		}(),
		want: want{"hello-00001", "", corev1.ConditionUnknown, servingv1.ReasonDeploying, `waiting for Revision "hello-00001" to become ready`},
	}, {
		name:   "the latest failed, the previous keeps serving",
		cfg:    configuration(2, "", "hello-00001"),
		latest: revision("hello-00002", "2", corev1.ConditionFalse, "exit 1"),
		revs:   []servingv1.Revision{ready1, revision("hello-00002", "2", corev1.ConditionFalse, "exit 1")},
		want:   want{"hello-00002", "hello-00001", corev1.ConditionFalse, servingv1.ReasonRevisionFailed, `Revision "hello-00002" failed with message: exit 1`},
	}, {
		name:   "a rollback: the older Revision the template names again is latest created and latest ready",
		cfg:    configuration(3, "hello-00001", "hello-00002"),
		latest: ready1, revs: []servingv1.Revision{ready1, ready2},
		want: want{"hello-00001", "hello-00001", corev1.ConditionTrue, "", ""},
	}, {
		name:   "a rollback to a Revision not ready: the latest ready keeps serving",
		cfg:    configuration(3, "hello-00001", "hello-00002"),
		latest: revision("hello-00001", "1", corev1.ConditionUnknown, ""),
		revs:   []servingv1.Revision{revision("hello-00001", "1", corev1.ConditionUnknown, ""), ready2},
		want:   want{"hello-00001", "hello-00002", corev1.ConditionUnknown, servingv1.ReasonDeploying, `waiting for Revision "hello-00001" to become ready`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Status.InitializeConditions()
			markStatus(cfg, &tc.latest, tc.revs)
			c := cfg.Status.GetCondition(duckv1.ConditionReady)
			got := want{cfg.Status.LatestCreatedRevisionName, cfg.Status.LatestReadyRevisionName, c.Status, c.Reason, c.Message}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLatestReady(t *testing.T) {
	ready := func(name, gen string) servingv1.Revision { return revision(name, gen, corev1.ConditionTrue, "") }
	deploying := func(name, gen string) servingv1.Revision { return revision(name, gen, corev1.ConditionUnknown, "") }
	failed := func(name, gen string) servingv1.Revision { return revision(name, gen, corev1.ConditionFalse, "exit 1") }
	deleting := func(rev servingv1.Revision) servingv1.Revision {
		rev.DeletionTimestamp = &metav1.Time{}
		return rev
	}
	stale := ready("hello-00002", "2")
	stale.Generation = 2
	tests := []struct {
		name   string
		cfg    *servingv1.Configuration
		latest servingv1.Revision
		revs   []servingv1.Revision // latest is added when missing
		want   string
	}{{
		name:   "none ready: keep what there is",
		cfg:    configuration(1, "", ""),
		latest: failed("hello-00001", "1"),
		want:   "",
	}, {
		name:   "the latest, not yet listed",
		cfg:    configuration(1, "", ""),
		latest: ready("hello-00001", "1"),
		want:   "hello-00001",
	}, {
		name:   "the latest as read, not its lagging listed copy",
		cfg:    configuration(2, "", "hello-00001"),
		latest: ready("hello-00002", "2"),
		revs:   []servingv1.Revision{ready("hello-00001", "1"), deploying("hello-00002", "2")},
		want:   "hello-00002",
	}, {
		name:   "ready at an older generation of the Revision does not count",
		cfg:    configuration(2, "", "hello-00001"),
		latest: stale,
		revs:   []servingv1.Revision{ready("hello-00001", "1")},
		want:   "hello-00001",
	}, {
		name:   "none ready yet: the highest generation, not the latest name",
		cfg:    configuration(11, "", ""),
		latest: deploying("hello-00011", "11"),
		revs:   []servingv1.Revision{ready("hello-00010", "10"), ready("hello-00002", "2")},
		want:   "hello-00010",
	}, {
		name:   "one generation, two names: the greater name",
		cfg:    configuration(4, "", ""),
		latest: ready("hello-b", "4"),
		revs:   []servingv1.Revision{ready("hello-a", "4")},
		want:   "hello-b",
	}, {
		name:   "deleted and unlabelled Revisions are left out",
		cfg:    configuration(11, "", ""),
		latest: deploying("hello-00011", "11"),
		revs:   []servingv1.Revision{ready("hello-00001", "1"), deleting(ready("hello-00009", "9")), ready("hello-00008", "")},
		want:   "hello-00001",
	}, {
		name:   "the latest failed: the newest ready above the latest ready",
		cfg:    configuration(3, "", "hello-00001"),
		latest: failed("hello-00003", "3"),
		revs:   []servingv1.Revision{ready("hello-00001", "1"), ready("hello-00002", "2")},
		want:   "hello-00002",
	}, {
		name:   "the latest ready failed: it stays, an older Revision does not take over",
		cfg:    configuration(2, "", "hello-00002"),
		latest: failed("hello-00002", "2"),
		revs:   []servingv1.Revision{ready("hello-00001", "1")},
		want:   "",
	}, {
		name:   "the latest ready is gone: the newest ready of all",
		cfg:    configuration(4, "", "hello-00003"),
		latest: deploying("hello-00004", "4"),
		revs:   []servingv1.Revision{ready("hello-00001", "1")},
		want:   "hello-00001",
	}, {
		name:   "the latest ready is being deleted: the newest ready of all",
		cfg:    configuration(4, "", "hello-00003"),
		latest: deploying("hello-00004", "4"),
		revs:   []servingv1.Revision{ready("hello-00001", "1"), deleting(ready("hello-00003", "3"))},
		want:   "hello-00001",
	}, {
		name:   "the latest ready is unlabelled: only the current generation",
		cfg:    configuration(3, "", "hello-x"),
		latest: deploying("hello-00003", "3"),
		revs:   []servingv1.Revision{ready("hello-00001", "1"), ready("hello-x", "")},
		want:   "",
	}, {
		name:   "a rollback: the older Revision the template names, ready",
		cfg:    configuration(3, "hello-a", "hello-b"),
		latest: ready("hello-a", "1"),
		revs:   []servingv1.Revision{ready("hello-b", "2")},
		want:   "hello-a",
	}, {
		name:   "a rollback to a Revision not ready: the newest ready above the latest ready",
		cfg:    configuration(4, "hello-a", "hello-b"),
		latest: deploying("hello-a", "1"),
		revs:   []servingv1.Revision{ready("hello-b", "2"), ready("hello-c", "3")},
		want:   "hello-c",
	}, {
		name:   "a rollback to a Revision that failed: the latest ready stays",
		cfg:    configuration(3, "hello-a", "hello-b"),
		latest: failed("hello-a", "1"),
		revs:   []servingv1.Revision{ready("hello-b", "2")},
		want:   "hello-b",
	}, {
		name:   "after a rollback, an unnamed generation deploying: the newest ready above the rolled-back-to",
		cfg:    configuration(4, "", "hello-a"),
		latest: deploying("hello-00004", "4"),
		revs:   []servingv1.Revision{ready("hello-a", "1"), ready("hello-b", "2")},
		want:   "hello-b",
	}, {
		name:   "after a rollback, an unnamed generation ready",
		cfg:    configuration(4, "", "hello-a"),
		latest: ready("hello-00004", "4"),
		revs:   []servingv1.Revision{ready("hello-a", "1"), ready("hello-b", "2")},
		want:   "hello-00004",
	}, {
		name:   "after a rollback, naming the newer Revision again: forward to it",
		cfg:    configuration(4, "hello-b", "hello-a"),
		latest: ready("hello-b", "2"),
		revs:   []servingv1.Revision{ready("hello-a", "1")},
		want:   "hello-b",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := latestReady(tc.cfg, &tc.latest, tc.revs); got != tc.want {
				t.Errorf("latestReady = %q, want %q", got, tc.want)
			}
		})
	}
}
