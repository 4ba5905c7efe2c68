//go:build !unit

package gitrepository

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	gitsource "github.com/knitops/knit/gitsync/source"
	"github.com/knitops/knit/gitsync/source/sshgittest"
)

// A repository with an scp-like SSH URL deploys with the deploy key and
// known_hosts of its Secret; without a Secret it says what it needs.
func TestSSHRepository(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	g := newGitRepo(t)
	first := g.commit("Hello", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "service.yaml": serviceYAML("SSH")})
	identity, authorized := sshgittest.NewKey(t)
	srv := sshgittest.New(t, filepath.Dir(g.dir), authorized)
	allowLoopback(t, srv.Addr)
	host, port, _ := strings.Cut(srv.Addr, ":")
	url := fmt.Sprintf("ssh://git@%s:%s/%s/.git", host, port, filepath.Base(g.dir))

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deploy-key", Labels: map[string]string{gitsource.CredentialsLabel: "true"}},
		Data: map[string][]byte{gitsource.SecretIdentity: identity, gitsource.SecretKnownHosts: []byte(srv.KnownHosts())}}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
		Spec: knitv1alpha1.GitRepositorySpec{URL: url, SecretRef: &corev1.LocalObjectReference{Name: "deploy-key"}, Interval: metav1.Duration{Duration: 3600e9}}}
	if err := k8s.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	waitTemplate(t, ns, "hello-"+first[:7])

	t.Run("without a Secret the condition says what an SSH URL needs", func(t *testing.T) {
		before := srv.Attempts.Load()
		bare := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nokey"},
			Spec: knitv1alpha1.GitRepositorySpec{URL: "git@" + srv.Addr + ":app.git", Interval: metav1.Duration{Duration: 3600e9}}}
		if err := k8s.Create(ctx, bare); err != nil {
			t.Fatal(err)
		}
		eventually(t, "Fetched=False SSHKeyRequired", func(ctx context.Context) (bool, string) {
			c, _ := repoCondition(ctx, ns, "nokey", knitv1alpha1.GitRepositoryConditionFetched)
			if c == nil || !c.IsFalse() || c.Reason != ReasonSSHKeyRequired {
				return false, fmt.Sprintf("%+v", c)
			}
			return strings.Contains(c.Message, "holding identity (a deploy key) and known_hosts"), c.Message
		})
		if n := srv.Attempts.Load() - before; n != 0 {
			t.Errorf("the server saw %d authentications from a repository without a key", n)
		}
	})
}
