//go:build !unit

package gitrepository

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/signatures"
	"github.com/knitops/knit/gitsync/signatures/signtest"
)

// signedCommit is commit, signed by signer as git signs with gpg or
// gpg.format=ssh.
func (g *gitRepo) signedCommit(msg string, files map[string]string, signer git.Signer) string {
	g.t.Helper()
	g.stage(files)
	r, err := git.PlainOpen(g.dir)
	if err != nil {
		g.t.Fatal(err)
	}
	w, err := r.Worktree()
	if err != nil {
		g.t.Fatal(err)
	}
	who := &object.Signature{Name: "Ada", Email: "ada@example.com", When: time.Now()}
	h, err := w.Commit(msg, &git.CommitOptions{Signer: signer, Author: who, Committer: who, AllowEmptyCommits: true})
	if err != nil {
		g.t.Fatal(err)
	}
	return h.String()
}

// A GitRepository with spec.verify deploys a commit signed by a key its
// Secret trusts, OpenPGP or SSH, and refuses any other saying who signed
// it, while the last good revision keeps serving.
func TestVerifiedCommits(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	ada := signtest.MustPGP(t, "Ada", "ada@example.com")
	eve := signtest.MustPGP(t, "Eve", "eve@example.com")
	adaSSH := signtest.MustSSH(t)
	pub := ada.MustPublic(t)
	trusted := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "signers"}, Data: map[string][]byte{
		"ada.asc": pub, signatures.AllowedSignersKey: []byte(adaSSH.AllowedSigner("ada@example.com", "")),
	}}
	if err := k8s.Create(ctx, trusted); err != nil {
		t.Fatal(err)
	}
	g := newGitRepo(t)
	first := g.signedCommit("Signed with OpenPGP", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "service.yaml": serviceYAML("PGP")}, ada)
	repo := &knitv1alpha1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
		Spec: knitv1alpha1.GitRepositorySpec{URL: g.dir, Interval: metav1.Duration{Duration: 3600e9},
			Verify: &knitv1alpha1.Verification{SecretRef: corev1.LocalObjectReference{Name: "signers"}}},
	}
	if err := k8s.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	waitTemplate(t, ns, "hello-"+first[:7])
	signedBy := func(t *testing.T, sha, want string) {
		t.Helper()
		eventually(t, "main applied at "+sha[:7]+" signed by "+want, func(ctx context.Context) (bool, string) {
			_, repo := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
			if repo == nil || len(repo.Status.Branches) == 0 {
				return false, "no branch status"
			}
			b := repo.Status.Branches[0]
			return b.AppliedCommit == sha && strings.Contains(b.Signer, want), fmt.Sprintf("%+v", b)
		})
	}
	signedBy(t, first, "(Ada <ada@example.com>)")

	last := first
	for _, tc := range []struct {
		name   string
		signer git.Signer
		want   string
	}{
		{"unsigned", nil, "is not signed, and spec.verify trusts only commits signed by a key of Secret " + ns + "/signers"},
		{"signed by a key the Secret does not hold", eve, "is signed by OpenPGP key"},
	} {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			var sha string
			if tc.signer == nil {
				sha = g.commit(tc.name, map[string]string{"service.yaml": serviceYAML("Unsigned")})
			} else {
				sha = g.signedCommit(tc.name, map[string]string{"service.yaml": serviceYAML("Eve")}, tc.signer)
			}
			trigger(ns, "hello")
			waitRejected(t, ns, sha, tc.want)
			waitTemplate(t, ns, "hello-"+last[:7])
		})
	}

	t.Run("an SSH-signed commit deploys", func(t *testing.T) {
		sha := g.signedCommit("Signed with SSH", map[string]string{"service.yaml": serviceYAML("SSH")}, adaSSH)
		trigger(ns, "hello")
		waitTemplate(t, ns, "hello-"+sha[:7])
		signedBy(t, sha, "SSH key "+adaSSH.Fingerprint())
	})
}
