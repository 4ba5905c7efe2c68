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

func TestMarkStatus(t *testing.T) {
	type want struct {
		LatestCreated, LatestReady string
		Status                     corev1.ConditionStatus
		Reason, Message            string
	}
	ready1 := revision("hello-00001", "1", corev1.ConditionTrue, "")
	tests := []struct {
		name   string
		latest servingv1.Revision
		revs   []servingv1.Revision
		want   want
	}{{
		name:   "the first Revision deploying",
		latest: revision("hello-00001", "1", "", ""),
		want:   want{"hello-00001", "", corev1.ConditionUnknown, servingv1.ReasonDeploying, `waiting for Revision "hello-00001" to become ready`},
	}, {
		name:   "ready",
		latest: ready1, revs: []servingv1.Revision{ready1},
		want: want{"hello-00001", "hello-00001", corev1.ConditionTrue, "", ""},
	}, {
		name: "ready at an older generation of the Revision is not ready yet",
		latest: func() servingv1.Revision {
			r := ready1.DeepCopy()
			r.Generation = 2
			return *r
		}(),
		want: want{"hello-00001", "", corev1.ConditionUnknown, servingv1.ReasonDeploying, `waiting for Revision "hello-00001" to become ready`},
	}, {
		name:   "the latest failed, the previous keeps serving",
		latest: revision("hello-00002", "2", corev1.ConditionFalse, "exit 1"),
		revs:   []servingv1.Revision{ready1, revision("hello-00002", "2", corev1.ConditionFalse, "exit 1")},
		want:   want{"hello-00002", "hello-00001", corev1.ConditionFalse, servingv1.ReasonRevisionFailed, `Revision "hello-00002" failed with message: exit 1`},
	}, {
		name:   "a rollback to an older template never hides a newer ready Revision",
		latest: revision("hello-v1", "3", "", ""),
		revs:   []servingv1.Revision{ready1, revision("hello-00002", "2", corev1.ConditionTrue, ""), revision("hello-v1", "3", "", "")},
		want:   want{"hello-v1", "hello-00002", corev1.ConditionUnknown, servingv1.ReasonDeploying, `waiting for Revision "hello-v1" to become ready`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &servingv1.Configuration{}
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

func TestNewestReady(t *testing.T) {
	deleting := revision("hello-00009", "9", corev1.ConditionTrue, "")
	deleting.DeletionTimestamp = &metav1.Time{}
	unlabelled := revision("hello-00008", "", corev1.ConditionTrue, "")
	tests := []struct {
		name string
		revs []servingv1.Revision
		want string
	}{
		{"none", nil, ""},
		{"none ready", []servingv1.Revision{revision("hello-00001", "1", corev1.ConditionFalse, "")}, ""},
		{"the highest generation, not the latest name", []servingv1.Revision{
			revision("hello-00010", "10", corev1.ConditionTrue, ""), revision("hello-00002", "2", corev1.ConditionTrue, ""), revision("hello-00011", "11", corev1.ConditionUnknown, ""),
		}, "hello-00010"},
		{"one generation, two names: the greater name", []servingv1.Revision{
			revision("hello-a", "4", corev1.ConditionTrue, ""), revision("hello-b", "4", corev1.ConditionTrue, ""),
		}, "hello-b"},
		{"deleted and unlabelled Revisions are left out", []servingv1.Revision{revision("hello-00001", "1", corev1.ConditionTrue, ""), deleting, unlabelled}, "hello-00001"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := newestReady(tc.revs); got != tc.want {
				t.Errorf("newestReady = %q, want %q", got, tc.want)
			}
		})
	}
}
