//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/decryption/sopstest"
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
