//go:build !unit

package gitrepository

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// A sync that succeeds records Normal Synced, a commit refused after it a
// Warning SyncFailed naming the reason and the commit, and the fix a
// Synced again; resyncs of each state record nothing more. They are read
// back through the events.k8s.io API, as `kubectl describe` reads them.
func TestSyncTransitionsRecordEvents(t *testing.T) {
	ns := newNamespace(t)
	g := newGitRepo(t)
	g.commit("Say hello", map[string]string{"kustomization.yaml": kustomization, "service.yaml": serviceYAML("World"), "config.yaml": configYAML})
	createRepo(t, ns, "hello", g.dir)
	synced := func(want bool) func(ctx context.Context) (bool, string) {
		return func(ctx context.Context) (bool, string) {
			c, _ := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
			return c != nil && c.IsTrue() == want && !c.IsUnknown(), fmt.Sprintf("Synced %+v", c)
		}
	}
	eventually(t, "synced", synced(true))

	bad := g.commit("Break the YAML", map[string]string{"service.yaml": "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: [oops\n"})
	trigger(ns, "hello")
	eventually(t, "the broken commit refused", synced(false))
	trigger(ns, "hello") // a resync of the refused commit
	g.commit("Fix the YAML", map[string]string{"service.yaml": serviceYAML("again")})
	trigger(ns, "hello")
	eventually(t, "synced again", synced(true))

	// Each transition recorded once: a second Synced makes the first a
	// series of two (the recorder merges repeats of one reason), a
	// SyncFailed recorded again at the resync would do the same.
	type recorded struct{ Type, Reason, Action string }
	want := map[recorded]int32{
		{corev1.EventTypeNormal, "Synced", "Sync"}:      2,
		{corev1.EventTypeWarning, "SyncFailed", "Sync"}: 1,
	}
	var list eventsv1.EventList
	eventually(t, "the Events of the sync's transitions", func(ctx context.Context) (bool, string) {
		if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		got := map[recorded]int32{}
		for _, e := range list.Items {
			if e.Regarding.Kind == "GitRepository" && e.Action == "Sync" {
				n := int32(1)
				if e.Series != nil {
					n = e.Series.Count
				}
				got[recorded{e.Type, e.Reason, e.Action}] += n
			}
		}
		diff := cmp.Diff(want, got)
		return diff == "", "events (-want +got):\n" + diff
	})
	for _, e := range list.Items {
		if e.Reason == "SyncFailed" && (!strings.HasPrefix(e.Note, knitv1alpha1.ReasonCommitRejected+": ") || !strings.Contains(e.Note, bad[:7])) {
			t.Errorf("SyncFailed note = %q, want the reason and the refused commit", e.Note)
		}
	}
}
