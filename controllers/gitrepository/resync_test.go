//go:build !unit

package gitrepository

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// A resync of an unchanged failing head announces the same failure again
// — the same commit, the same error — so its CloudEvent has the same id and
// the dispatcher sends it once (controllers/announce
// TestResyncOfFailingCommitSentOnce). An error that changed between passes
// would make every resync news.
func TestResyncAnnouncesTheSameFailure(t *testing.T) {
	ns := newNamespace(t)
	g := newGitRepo(t)
	bad := g.commit("Break the YAML", map[string]string{
		"kustomization.yaml": "resources:\n  - service.yaml\n",
		"service.yaml":       "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: [oops\n",
	})
	createRepo(t, ns, "broken", g.dir)
	eventually(t, "the failure announced", func(context.Context) (bool, string) {
		got := announced.about("broken")
		return len(got) > 0, fmt.Sprint(got)
	})
	for i := range 3 {
		// A pass applies again when the spec changes, at the periodic
		// resync, after a restart, or at every poll while the
		// repository's ServiceAccount lacks rights: a spec edit is the
		// one a test can make at once.
		resyncBySpecEdit(t, ns, "broken", i)
		eventually(t, fmt.Sprintf("resync %d announced", i+1), func(context.Context) (bool, string) {
			got := announced.about("broken")
			return len(got) > i+1, fmt.Sprint(got)
		})
	}
	got := announced.about("broken")
	for _, f := range got[1:] {
		if f != got[0] {
			t.Errorf("resyncs announced %q after %q: the same failure must read the same", f, got[0])
		}
	}
	if want := "broken " + bad + ":"; len(got[0]) < len(want) || got[0][:len(want)] != want {
		t.Errorf("announced %q, want the commit %s", got[0], bad)
	}
}

// resyncBySpecEdit changes the repository's poll interval, which moves
// its apply key, so the next pass renders and applies the head again.
func resyncBySpecEdit(t *testing.T, ns, name string, i int) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		repo := &knitv1alpha1.GitRepository{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, repo); err != nil {
			return err
		}
		repo.Spec.Interval = metav1.Duration{Duration: time.Hour + time.Duration(i+1)*time.Second}
		return k8s.Update(context.Background(), repo)
	})
	if err != nil {
		t.Fatal(err)
	}
}
