//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/decryption/sopstest"
	"github.com/knitops/knit/gitsync/signatures"
	"github.com/knitops/knit/gitsync/signatures/signtest"
)

// sealedService is examples/gitops-hello's Service greeting whatever the
// Secret greeting holds.
const sealedService = `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: hello
spec:
  template:
    metadata:
      annotations:
        autoscaling.knative.dev/max-scale: "3"
    spec:
      containers:
        - image: ko://./cmd/hello
          env:
            - name: TARGET
              valueFrom:
                secretKeyRef: {name: greeting, key: target}
`

// encryptedSecret: with spec.decryption naming a Secret that holds an age
// identity, a pushed Secret encrypted for it (as `sops --encrypt --age`
// writes it) is decrypted in memory and read by the app; a push of one
// encrypted for another key is refused, naming the file and both keys,
// and the last good revision keeps serving. The decrypted value shows in
// no status and no Event.
func (j *gitopsJourney) encryptedSecret(t *testing.T) {
	ctx := context.Background()
	key, recipient, err := sopstest.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "sops-age"}, Data: map[string][]byte{"age.agekey": []byte(key)}}
	if err := j.c.Create(ctx, keys); err != nil {
		t.Fatal(err)
	}
	repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"}}
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"decryption":{"provider":"sops","secretRef":{"name":"sops-age"}}}}`))
	if err := j.c.Patch(ctx, repo, patch); err != nil {
		t.Fatal(err)
	}

	encrypted := func(value, recipient string) string {
		plain := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: greeting\nstringData:\n  target: " + value + "\n"
		out, err := sopstest.Encrypt("greeting.yaml", []byte(plain), sopstest.KubernetesRegex, recipient)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	j.app.write("greeting.yaml", encrypted("Sealed", recipient))
	j.app.write("kustomization.yaml", "resources:\n  - service.yaml\n  - greeting.yaml\n")
	j.app.write("service.yaml", sealedService)
	sha := j.app.commitAll("Greet from an encrypted Secret")
	took := j.pushServes("main", helloHost, "Hello Sealed!", 2*time.Minute)
	j.timings = append(j.timings, fmt.Sprintf("push with an encrypted Secret %s", took))
	name := "hello-" + sha[:7]
	j.waitReady(name, sha, time.Minute)
	j.serving(name, "Hello Sealed!")
	if out, err := j.d.kubectl(t, "get", "secret", "greeting", "-o", "jsonpath={.metadata.annotations.knit\\.dev/decrypted-from}"); err != nil || out != "greeting.yaml" {
		t.Errorf("Secret greeting's knit.dev/decrypted-from = %q (%v), want greeting.yaml", out, err)
	}

	_, other, err := sopstest.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	j.app.write("greeting.yaml", encrypted("Unsealed", other))
	wrong := j.app.commitAll("Encrypt for a key knit does not hold")
	j.push("main")
	j.waitCondition("Synced=False naming "+wrong[:7]+" and the keys", func(repo *knitv1alpha1.GitRepository) (bool, string) {
		synced := repo.Status.GetCondition(knitv1alpha1.GitRepositoryConditionSynced)
		return synced.IsFalse() && strings.Contains(synced.Message, wrong[:7]) &&
			strings.Contains(synced.Message, "greeting.yaml is encrypted for "+other) &&
			strings.Contains(synced.Message, "Secret default/sops-age holds identities for "+recipient), fmt.Sprintf("Synced: %+v", synced)
	})
	j.serving(name, "Hello Sealed!")

	repo = &knitv1alpha1.GitRepository{}
	if err := j.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello"}, repo); err != nil {
		t.Fatal(err)
	}
	events := &eventsv1.EventList{}
	if err := j.c.List(ctx, events, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	seen := fmt.Sprintf("%+v", repo.Status)
	for _, e := range events.Items {
		seen += "\n" + e.Note
	}
	if strings.Contains(seen, "Sealed") {
		t.Errorf("a decrypted value shows in the GitRepository's status or an Event:\n%s", seen)
	}
}

// signedService is examples/gitops-hello's Service greeting target.
func signedService(target string) string {
	return strings.Replace(sealedService, "              valueFrom:\n                secretKeyRef: {name: greeting, key: target}\n", "              value: "+target+"\n", 1)
}

// commitSigned commits every change of the work tree signed by signer, as
// `git commit -S` does with gpg.format=ssh (through go-git's signer, so
// the test needs no ssh-keygen), and returns the SHA.
func (g *gitWorkTree) commitSigned(msg string, signer git.Signer) string {
	g.t.Helper()
	g.git("add", "--all")
	r, err := git.PlainOpen(g.dir)
	if err != nil {
		g.t.Fatal(err)
	}
	w, err := r.Worktree()
	if err != nil {
		g.t.Fatal(err)
	}
	who := &object.Signature{Name: gitAuthorName, Email: gitAuthorEmail, When: time.Now()}
	h, err := w.Commit(msg, &git.CommitOptions{Signer: signer, Author: who, Committer: who, AllowEmptyCommits: true})
	if err != nil {
		g.t.Fatal(err)
	}
	return h.String()
}

// signedCommits: with spec.verify naming a Secret of SSH allowed signers,
// an unsigned push is refused, saying so, while the last good revision
// serves; a push signed by an allowed key deploys, and the branch status
// says who signed it.
func (j *gitopsJourney) signedCommits(t *testing.T) {
	ctx := context.Background()
	key := signtest.MustSSH(t)
	signers := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "signers"},
		Data: map[string][]byte{signatures.AllowedSignersKey: []byte(key.AllowedSigner(gitAuthorEmail, `namespaces="git"`))}}
	if err := j.c.Create(ctx, signers); err != nil {
		t.Fatal(err)
	}
	repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"}}
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"verify":{"mode":"HEAD","secretRef":{"name":"signers"}}}}`))
	if err := j.c.Patch(ctx, repo, patch); err != nil {
		t.Fatal(err)
	}
	last, greeting := j.main, j.greeting

	j.app.git("rm", "--quiet", "greeting.yaml")
	j.app.write("kustomization.yaml", "resources:\n  - service.yaml\n")
	j.app.write("service.yaml", signedService("Unsigned"))
	unsigned := j.app.commitAll("An unsigned change")
	j.push("main")
	j.waitCondition("Synced=False: "+unsigned[:7]+" is not signed", func(repo *knitv1alpha1.GitRepository) (bool, string) {
		synced := repo.Status.GetCondition(knitv1alpha1.GitRepositoryConditionSynced)
		return synced.IsFalse() && strings.Contains(synced.Message, "commit "+unsigned[:7]+" is not signed"), fmt.Sprintf("Synced: %+v", synced)
	})
	j.serving(last, greeting)

	j.app.write("service.yaml", signedService("Signed"))
	signed := j.app.commitSigned("A signed change", key)
	took := j.pushServes("main", helloHost, "Hello Signed!", 2*time.Minute)
	j.timings = append(j.timings, fmt.Sprintf("signed push %s", took))
	j.waitReady("hello-"+signed[:7], signed, time.Minute)
	j.waitCondition("main applied, signed by "+key.Fingerprint(), func(repo *knitv1alpha1.GitRepository) (bool, string) {
		for _, b := range repo.Status.Branches {
			if b.Name == "main" {
				return b.AppliedCommit == signed && strings.Contains(b.Signer, key.Fingerprint()), fmt.Sprintf("%+v", b)
			}
		}
		return false, "no main"
	})
}
