//go:build !unit

package gitrepository

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// A URL carrying credentials is not fetched, and neither the status nor
// the Events say what they were; a Secret not labelled for Git is not
// used, and the status says how to label it.
func TestCredentialsRefusedReadably(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	const password = "s3cret-pass"
	createRepo(t, ns, "inurl", "https://me:"+password+"@example.invalid/app.git")
	sa := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sa-token"},
		Data: map[string][]byte{"bearerToken": []byte(password)}}
	if err := k8s.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	repo := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unlabelled"},
		Spec: knitv1alpha1.GitRepositorySpec{URL: "https://example.invalid/app.git", SecretRef: &corev1.LocalObjectReference{Name: "sa-token"},
			Interval: metav1.Duration{Duration: 3600e9}}}
	if err := k8s.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"inurl": ReasonCredentialsInURL, "unlabelled": ReasonSecretNotForGit} {
		eventually(t, name+" refused", func(ctx context.Context) (bool, string) {
			c, repo := repoCondition(ctx, ns, name, knitv1alpha1.GitRepositoryConditionFetched)
			if c == nil || !c.IsFalse() || c.Reason != want {
				return false, fmt.Sprintf("Fetched %+v", c)
			}
			status, _ := json.Marshal(repo.Status)
			if strings.Contains(string(status), password) {
				t.Errorf("the status of %s shows the credential: %s", name, status)
			}
			return true, ""
		})
	}
	var list eventsv1.EventList
	eventually(t, "the FetchFailed Events", func(ctx context.Context) (bool, string) {
		if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		n := 0
		for _, e := range list.Items {
			if e.Reason == "FetchFailed" {
				n++
			}
		}
		return n >= 2, fmt.Sprintf("%d FetchFailed Events", n)
	})
	for _, e := range list.Items {
		if strings.Contains(e.Note, password) {
			t.Errorf("Event %s shows the credential: %s", e.Reason, e.Note)
		}
	}
}
