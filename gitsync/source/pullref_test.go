package source

import (
	"context"
	"testing"
)

// TestFetchPullRef: a fork's head is fetched by the forge's pull ref at
// its own commit, not confused with the base's branch of the same name,
// and a base branch named like a pull ref does not pass for one.
func TestFetchPullRef(t *testing.T) {
	dir, git := gitRepo(t)
	writeFile(t, dir, "service.yaml", "kind: Service\n")
	git("add", ".")
	git("commit", "-qm", "base")
	base := git("rev-parse", "HEAD")
	git("checkout", "-q", "-b", "fork-work")
	writeFile(t, dir, "service.yaml", "kind: Service # the fork's\n")
	git("commit", "-qam", "fork")
	fork := git("rev-parse", "HEAD")
	git("checkout", "-q", "main")
	git("update-ref", "refs/pull/7/head", fork)
	git("update-ref", "refs/heads/refs/pull/8/head", base) // a branch, not a pull ref
	git("branch", "-q", "-D", "fork-work")

	c := &Cache{Dir: t.TempDir(), Egress: localDirs}
	got, err := c.Fetch(context.Background(), "default/hello", dir, []string{"main", "refs/pull/7/head", "refs/pull/8/head"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Heads["main"] != base || got.Heads["refs/pull/7/head"] != fork {
		t.Fatalf("heads = %v, want main at %s and refs/pull/7/head at %s", got.Heads, base, fork)
	}
	if len(got.Missing) != 1 || got.Missing[0] != "refs/pull/8/head" {
		t.Errorf("missing = %v, want the branch named like a pull ref", got.Missing)
	}
	if _, err := c.Commit("default/hello", fork); err != nil {
		t.Errorf("the pull ref's commit was not fetched: %v", err)
	}
}
