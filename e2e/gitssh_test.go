//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/source/sshgittest"
	"github.com/knitops/knit/internal/gitea"
)

// TestSSHDeployKeyJourney: knit dev fetches a repository from Gitea's SSH
// server with a read-only deploy key and the server's known_hosts, and
// deploys it; a GitRepository whose known_hosts holds another key for
// that server is refused before it authenticates, saying which key the
// server showed.
func TestSSHDeployKeyJourney(t *testing.T) {
	forge := gitea.Start(t, gitea.Options{SSH: true})
	d := startKnitDev(t, filepath.Join(t.TempDir(), "state"))
	c := d.client(t)
	ctx := context.Background()

	app := newGitWorkTree(t, filepath.Join(repoRoot, "examples", "gitops-hello"), "Hello over SSH")
	forge.CreateRepo("ssh-hello")
	app.git("push", "--quiet", forge.CloneURL("ssh-hello"), "main")
	identity, public := sshgittest.NewKey(t)
	forge.AddDeployKey("ssh-hello", "knit", strings.TrimSpace(string(ssh.MarshalAuthorizedKey(public))))
	allowEgress(t, c, forge.SSHAddr)

	_, otherHost := sshgittest.NewKey(t)
	host, port, _ := strings.Cut(forge.SSHAddr, ":")
	wrongHosts := "[" + host + "]:" + port + " " + string(ssh.MarshalAuthorizedKey(otherHost))
	for name, knownHosts := range map[string]string{"deploy-key": forge.KnownHosts(), "wrong-host-key": wrongHosts} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{"knit.dev/git-credentials": "true"}},
			Data: map[string][]byte{"identity": identity, "known_hosts": []byte(knownHosts)}}
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	repo := func(name, url, secret string) *knitv1alpha1.GitRepository {
		return &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: knitv1alpha1.GitRepositorySpec{
			URL: url, SecretRef: &corev1.LocalObjectReference{Name: secret}, Interval: metav1.Duration{Duration: time.Hour}}}
	}
	// Gitea's SSH server listens on a free port, which Git's scp-like
	// spelling cannot name: the journey uses ssh://.
	if err := c.Create(ctx, repo("hello", forge.SSHCloneURL("ssh-hello"), "deploy-key")); err != nil {
		t.Fatal(err)
	}
	waitBody(t, d.httpAddr, helloHost, "Hello GitOps!", 3*time.Minute)

	if err := c.Create(ctx, repo("impostor", forge.SSHCloneURL("ssh-hello"), "wrong-host-key")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the wrong host key refused", time.Minute, func(ctx context.Context) (bool, string) {
		r := &knitv1alpha1.GitRepository{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "impostor"}, r); err != nil {
			return false, err.Error()
		}
		f := r.Status.GetCondition(knitv1alpha1.GitRepositoryConditionFetched)
		return f.IsFalse() && strings.Contains(f.Message, "is not in the Secret's known_hosts: refusing to authenticate"), fmt.Sprintf("Fetched: %+v", f)
	})

	// deletionPolicy Orphan: the repository goes, what it deployed keeps
	// serving (the GitOps journey deletes its own with Delete).
	r := &knitv1alpha1.GitRepository{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, r); err != nil {
		t.Fatal(err)
	}
	r.Spec.DeletionPolicy = knitv1alpha1.DeletionPolicyOrphan
	if err := c.Update(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, r); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "GitRepository hello gone", time.Minute, func(ctx context.Context) (bool, string) {
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, &knitv1alpha1.GitRepository{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	if code, body, err := getPath(d.httpAddr, helloHost, "/"); err != nil || code != http.StatusOK || !strings.Contains(body, "Hello GitOps!") {
		t.Errorf("after deleting its GitRepository with deletionPolicy Orphan, hello answers %d %q %v; want it still serving", code, body, err)
	}
}
