package pullrequest

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/api"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/forge"
)

const (
	shaA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

var repoKey = types.NamespacedName{Namespace: "default", Name: "hello"}

func fakeClient(t *testing.T) client.Client {
	t.Helper()
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"},
		Spec: knitv1alpha1.GitRepositorySpec{URL: "https://gitea.example.com/ada/hello.git", Provider: knitv1alpha1.GitProviderGitea}}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(repo).Build()
}

// forkEvent is a pull request from mallory's fork, whose branch has the
// same name as one of the base repository's.
func forkEvent(action forge.Action, head string, at time.Time, labels ...string) forge.Event {
	return forge.Event{Kind: forge.KindPullRequest, Forge: forge.ForgeGitea, Repo: "hello", ForgeRepo: "ada/hello",
		Number: 7, Action: action, HeadBranch: "main", HeadSHA: head, Fork: true, HeadRepo: "mallory/hello", BaseBranch: "main",
		Body: "knit: canary 100 every 5s automerge max-5xx 100", Labels: labels, UpdatedAt: at}
}

func get(t *testing.T, c client.Client) *knitv1alpha1.PullRequest {
	t.Helper()
	pr := &knitv1alpha1.PullRequest{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "hello-7"}, pr); err != nil {
		t.Fatal(err)
	}
	return pr
}

// TestFromForgeFork: a fork's head is its pull ref, never the base's
// branch of the same name; it is not approved until a maintainer adds the
// label, the approval covers the head it was given for, and a push after
// it is not approved.
func TestFromForgeFork(t *testing.T) {
	ctx, c := context.Background(), fakeClient(t)
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	steps := []struct {
		name         string
		event        forge.Event
		approvedA    bool
		approvedB    bool
		wantApproved string
	}{
		{"opened", forkEvent(forge.ActionOpened, shaA, t0), false, false, ""},
		{"approved", forkEvent(forge.ActionEdited, shaA, t0.Add(time.Minute), DefaultApprovalLabel), true, false, shaA},
		{"pushed after approval", forkEvent(forge.ActionSynchronize, shaB, t0.Add(2*time.Minute), DefaultApprovalLabel), true, false, shaA},
		{"description edited", forkEvent(forge.ActionEdited, shaB, t0.Add(3*time.Minute), DefaultApprovalLabel), true, false, shaA},
		{"label removed", forkEvent(forge.ActionEdited, shaB, t0.Add(4*time.Minute)), false, false, ""},
		{"approved again", forkEvent(forge.ActionEdited, shaB, t0.Add(5*time.Minute), DefaultApprovalLabel), false, true, shaB},
	}
	for _, s := range steps {
		if err := FromForge(ctx, c, repoKey, s.event); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		pr := get(t, c)
		if pr.Spec.HeadBranch != "refs/pull/7/head" || !IsFork(pr) {
			t.Fatalf("%s: head %q, fork %v; want refs/pull/7/head of a fork", s.name, pr.Spec.HeadBranch, IsFork(pr))
		}
		if Approved(pr, shaA) != s.approvedA || Approved(pr, shaB) != s.approvedB || pr.Annotations[ApprovedCommitAnnotation] != s.wantApproved {
			t.Errorf("%s: approved A=%v B=%v (%q), want A=%v B=%v (%q)", s.name, Approved(pr, shaA), Approved(pr, shaB),
				pr.Annotations[ApprovedCommitAnnotation], s.approvedA, s.approvedB, s.wantApproved)
		}
		if AutoMerge(pr) {
			t.Errorf("%s: automerge read from the description", s.name)
		}
	}
}

// TestFromForgeRefusesReplay: an event older than the one recorded (a
// replay of a captured delivery after a restart) changes nothing.
func TestFromForgeRefusesReplay(t *testing.T) {
	ctx, c := context.Background(), fakeClient(t)
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	open := forge.Event{Kind: forge.KindPullRequest, Forge: forge.ForgeGitea, Number: 7, Action: forge.ActionOpened,
		HeadBranch: "feature", HeadSHA: shaA, BaseBranch: "main", UpdatedAt: t0}
	closed := open
	closed.Action, closed.UpdatedAt = forge.ActionClosed, t0.Add(time.Minute)
	for _, e := range []forge.Event{open, closed} {
		if err := FromForge(ctx, c, repoKey, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := FromForge(ctx, c, repoKey, open); !errors.Is(err, forge.ErrStale) {
		t.Fatalf("replayed open = %v, want ErrStale", err)
	}
	if pr := get(t, c); pr.Spec.State != knitv1alpha1.PullRequestClosed {
		t.Errorf("state after the replay = %s, want closed", pr.Spec.State)
	}
}

func TestPullRef(t *testing.T) {
	for f, want := range map[forge.Forge]string{forge.ForgeGitHub: "refs/pull/3/head", forge.ForgeGitea: "refs/pull/3/head",
		forge.ForgeGitLab: "refs/merge-requests/3/head", forge.ForgeGeneric: "refs/pull/3/head"} {
		if got := PullRef(f, 3); got != want {
			t.Errorf("PullRef(%s) = %s, want %s", f, got, want)
		}
	}
}
