//go:build !unit

package gitrepository

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// The suite's fetch limit, and how its message says to raise it.
const (
	maxFetchBytes = 4 << 20
	limitHint     = "raise the limit with knit dev --git-max-fetch-size"
)

// A push whose new commits weigh more than one fetch may bring (here a
// 12 MiB file under the suite's 4 MiB limit) is neither fetched nor
// synced: Fetched and Synced say TooLarge, naming the limit and how to
// raise it, and the Service keeps the revision of the last good commit.
// Taking the file out again syncs the next commit: a shallow fetch of it
// does not bring the file its history holds.
func TestCommitsTooLargeToFetch(t *testing.T) {
	ns := newNamespace(t)
	g := newGitRepo(t)
	first := g.commit("Say hello", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "service.yaml": serviceYAML("World")})
	createRepo(t, ns, "hello", g.dir)
	waitTemplate(t, ns, "hello-"+first[:7])

	randomFile(t, filepath.Join(g.dir, "model.bin"), 3*maxFetchBytes)
	big := g.commit("Add the model", map[string]string{"service.yaml": serviceYAML("model")})
	trigger(ns, "hello")
	eventually(t, "Fetched and Synced False with TooLarge", func(ctx context.Context) (bool, string) {
		fetched, repo := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionFetched)
		if repo == nil || !fetched.IsFalse() || fetched.Reason != knitv1alpha1.ReasonTooLarge {
			return false, fmt.Sprintf("Fetched %+v", fetched)
		}
		synced := repo.Status.GetCondition(knitv1alpha1.GitRepositoryConditionSynced)
		return synced.IsFalse() && synced.Reason == knitv1alpha1.ReasonTooLarge, fmt.Sprintf("Synced %+v", synced)
	})
	synced, _ := repoCondition(context.Background(), ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
	t.Logf("Synced: %s", synced.Message)
	for _, want := range []string{"4 MiB", limitHint, "keeps serving"} {
		if !strings.Contains(synced.Message, want) {
			t.Errorf("Synced's message does not say %q: %s", want, synced.Message)
		}
	}
	waitTemplate(t, ns, "hello-"+first[:7])
	if svc, err := getService(context.Background(), ns, "hello"); err != nil || svc.Spec.Template.Name != "hello-"+first[:7] {
		t.Errorf("the too-large commit %s changed Service hello: %v", big[:7], err)
	}

	fixed := g.commit("Keep the model out of Git", map[string]string{"model.bin": ""})
	trigger(ns, "hello")
	waitTemplate(t, ns, "hello-"+fixed[:7])
	eventually(t, "Fetched and Synced True again", func(ctx context.Context) (bool, string) {
		fetched, repo := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionFetched)
		if repo == nil {
			return false, "no repository"
		}
		synced := repo.Status.GetCondition(knitv1alpha1.GitRepositoryConditionSynced)
		return fetched.IsTrue() && synced.IsTrue(), fmt.Sprintf("Fetched %+v, Synced %+v", fetched, synced)
	})
}

// randomFile writes size bytes no compression shrinks.
func randomFile(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(f, rand.Reader, size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
