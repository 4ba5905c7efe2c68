package pullrequest

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/forge"
)

// Name is the PullRequest resource of a repository's pull request number.
func Name(repo string, number int64) string { return fmt.Sprintf("%s-%d", repo, number) }

// Request is a pull request as a forge or `knit pr` describes it.
type Request struct {
	// Repository is the GitRepository (same namespace as the resource).
	Repository types.NamespacedName
	// Number on the forge; 0 asks Open for the next free number.
	Number                 int64
	HeadBranch, BaseBranch string
	// HeadCommit pins the head's SHA when the forge reported it.
	HeadCommit string
	State      knitv1alpha1.PullRequestState
	// Canary is the share of the base's traffic; nil keeps what is set.
	Canary *int64
	// Described, when set, replaces the title, description and labels:
	// a forge's event carries them whole, `knit pr` does not.
	Described *Description
	// Provenance, from a forge's event, records whether the head is a
	// fork's and a maintainer's approval of it, and refuses a stale event.
	Provenance *Provenance
}

// Description is what a forge shows of a pull request besides its
// branches: a canary may be asked for in the description or a label.
type Description struct {
	Title, Body string
	Labels      []string
}

// Upsert creates or updates the PullRequest for r and returns it. A
// canary percent set earlier (by `knit pr` or kubectl) survives forge
// updates that do not carry one.
func Upsert(ctx context.Context, c client.Client, r Request) (*knitv1alpha1.PullRequest, error) {
	if r.Number == 0 {
		n, err := nextNumber(ctx, c, r.Repository)
		if err != nil {
			return nil, err
		}
		r.Number = n
	}
	pr := &knitv1alpha1.PullRequest{ObjectMeta: metav1.ObjectMeta{Namespace: r.Repository.Namespace, Name: Name(r.Repository.Name, r.Number)}}
	err := c.Get(ctx, client.ObjectKeyFromObject(pr), pr)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("get PullRequest %s: %w", pr.Name, err)
	}
	exists := err == nil
	if p := r.Provenance; p != nil {
		var labels []string
		if r.Described != nil {
			labels = r.Described.Labels
		}
		if err := applyProvenance(pr, p, pr.Spec.Labels, labels, r.HeadCommit); err != nil {
			return nil, err
		}
	}
	pr.Spec.Repository, pr.Spec.Number, pr.Spec.State = r.Repository.Name, r.Number, r.State
	if r.HeadBranch != "" {
		pr.Spec.HeadBranch = r.HeadBranch
	}
	if r.BaseBranch != "" {
		pr.Spec.BaseBranch = r.BaseBranch
	}
	if r.HeadCommit != "" {
		pr.Spec.HeadCommit = r.HeadCommit
	}
	if r.Canary != nil {
		pr.Spec.CanaryPercent = *r.Canary
	}
	if d := r.Described; d != nil {
		pr.Spec.Title, pr.Spec.Description, pr.Spec.Labels = d.Title, d.Body, d.Labels
	}
	if exists {
		err = c.Update(ctx, pr)
	} else {
		err = c.Create(ctx, pr)
	}
	if err != nil {
		return nil, fmt.Errorf("save PullRequest %s: %w", pr.Name, err)
	}
	return pr, nil
}

// FromForge records a verified forge pull_request event. A fork's head
// is recorded as the forge's pull ref (PullRef), never its branch name,
// which in the base repository names another branch, or none.
func FromForge(ctx context.Context, c client.Client, repo types.NamespacedName, e forge.Event) error {
	gr := &knitv1alpha1.GitRepository{}
	if err := c.Get(ctx, repo, gr); err != nil {
		return fmt.Errorf("get GitRepository %s: %w", repo, err)
	}
	head := e.HeadBranch
	if e.Fork {
		head = PullRef(e.Forge, e.Number)
	}
	_, err := Upsert(ctx, c, Request{
		Repository: repo, Number: e.Number, HeadBranch: head, BaseBranch: e.BaseBranch, HeadCommit: e.HeadSHA,
		State:      StateOf(e.Action, e.Merged),
		Described:  &Description{Title: e.Title, Body: e.Body, Labels: e.Labels},
		Provenance: &Provenance{Fork: e.Fork, UpdatedAt: e.UpdatedAt, ApprovalLabel: ApprovalLabel(gr)},
	})
	return err
}

// StateOf maps a forge's action to the PullRequest's state.
func StateOf(action forge.Action, merged bool) knitv1alpha1.PullRequestState {
	switch {
	case action == forge.ActionClosed && merged:
		return knitv1alpha1.PullRequestMerged
	case action == forge.ActionClosed:
		return knitv1alpha1.PullRequestClosed
	}
	return knitv1alpha1.PullRequestOpen
}

// nextNumber is one more than the highest number the repository's pull
// requests use, as a forge numbers them.
func nextNumber(ctx context.Context, c client.Client, repo types.NamespacedName) (int64, error) {
	list := &knitv1alpha1.PullRequestList{}
	if err := c.List(ctx, list, client.InNamespace(repo.Namespace)); err != nil {
		return 0, fmt.Errorf("list PullRequests: %w", err)
	}
	return NextNumber(list.Items, repo.Name), nil
}

// NextNumber is the number a new pull request of repo gets.
func NextNumber(prs []knitv1alpha1.PullRequest, repo string) int64 {
	var highest int64
	for _, pr := range prs {
		if pr.Spec.Repository == repo && pr.Spec.Number > highest {
			highest = pr.Spec.Number
		}
	}
	return highest + 1
}
