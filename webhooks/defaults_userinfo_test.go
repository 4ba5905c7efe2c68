package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestRecordUser(t *testing.T) {
	const creator, updater = servingv1.CreatorAnnotation, servingv1.UpdaterAnnotation
	tests := []struct {
		name             string
		meta             map[string]string
		old              *metav1.ObjectMeta
		oldSpec, newSpec string
		user             string
		want             map[string]string
	}{{
		name: "create records the user as creator and modifier",
		user: "alice",
		want: map[string]string{creator: "alice", updater: "alice"},
	}, {
		name: "create overwrites annotations the user wrote",
		meta: map[string]string{creator: "mallory", "keep": "me"},
		user: "alice",
		want: map[string]string{creator: "alice", updater: "alice", "keep": "me"},
	}, {
		name: "create without a user records nothing",
	}, {
		name:    "a spec change records the modifier and keeps the creator",
		meta:    map[string]string{creator: "bob"},
		old:     &metav1.ObjectMeta{Annotations: map[string]string{creator: "alice", updater: "alice"}},
		oldSpec: "v1", newSpec: "v2", user: "bob",
		want: map[string]string{creator: "alice", updater: "bob"},
	}, {
		name:    "a metadata-only update keeps both, restoring what an apply dropped",
		old:     &metav1.ObjectMeta{Annotations: map[string]string{creator: "alice", updater: "alice"}},
		oldSpec: "v1", newSpec: "v1", user: "bob",
		want: map[string]string{creator: "alice", updater: "alice"},
	}, {
		name:    "an update cannot add a creator the object never had",
		meta:    map[string]string{creator: "mallory", updater: "mallory"},
		old:     &metav1.ObjectMeta{},
		oldSpec: "v1", newSpec: "v1", user: "mallory",
		want: map[string]string{},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			meta := metav1.ObjectMeta{Annotations: tc.meta}
			recordUser(&meta, tc.old, tc.oldSpec, tc.newSpec, tc.user)
			if diff := cmp.Diff(tc.want, meta.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}
