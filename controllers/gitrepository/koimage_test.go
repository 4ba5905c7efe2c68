//go:build !unit

package gitrepository

import (
	"context"
	"fmt"
	"strings"
	"testing"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// A pushed Service whose ko:// image is a go build flag in disguise is
// rejected before anything builds or applies: Synced says which image and
// why, and the Service keeps the revision of the last good commit.
func TestFlagLikeKoImageIsRejected(t *testing.T) {
	ns := newNamespace(t)
	g := newGitRepo(t)
	first := g.commit("Say hello", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "service.yaml": serviceYAML("World")})
	createRepo(t, ns, "hello", g.dir)
	waitTemplate(t, ns, "hello-"+first[:7])

	evil := strings.Replace(serviceYAML("pwned"), "ko://./cmd/hello", `"ko://-toolexec=/bin/sh -c id"`, 1)
	bad := g.commit("Build with a flag", map[string]string{"service.yaml": evil})
	trigger(ns, "hello")
	eventually(t, "Synced False naming the image", func(ctx context.Context) (bool, string) {
		synced, repo := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
		if repo == nil {
			return false, "no repository"
		}
		ok := synced.IsFalse() && synced.Reason == knitv1alpha1.ReasonCommitRejected &&
			strings.Contains(synced.Message, "ko://-toolexec") && strings.Contains(synced.Message, "starts with '-'") &&
			strings.Contains(synced.Message, "keeps serving")
		return ok, fmt.Sprintf("Synced %+v", synced)
	})
	svc, err := getService(context.Background(), ns, "hello")
	if err != nil || svc.Spec.Template.Name != "hello-"+first[:7] || strings.Contains(svc.Spec.Template.Spec.Containers[0].Image, "toolexec") {
		t.Errorf("the rejected commit %s changed Service hello: %v", bad[:7], err)
	}
}

// A dockerfile:// image is built by a builder that takes it, or the
// commit is rejected saying so (a cluster installed without builds):
// never applied as an image no node can pull. One whose directory leaves
// the repository is rejected before any builder is asked.
func TestDockerfileImageWithoutBuilderIsRejected(t *testing.T) {
	ns := newNamespace(t)
	g := newGitRepo(t)
	first := g.commit("Say hello", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "service.yaml": serviceYAML("World")})
	createRepo(t, ns, "hello", g.dir)
	waitTemplate(t, ns, "hello-"+first[:7])

	for image, want := range map[string]string{
		"dockerfile://./web":    "this installation builds no dockerfile:// images",
		"dockerfile://./../etc": "only dots",
	} {
		g.commit("Build "+image, map[string]string{"web/Dockerfile": "FROM scratch\n",
			"service.yaml": strings.Replace(serviceYAML("docker"), "ko://./cmd/hello", image, 1)})
		trigger(ns, "hello")
		eventually(t, "Synced False naming "+image, func(ctx context.Context) (bool, string) {
			synced, repo := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
			if repo == nil {
				return false, "no repository"
			}
			ok := synced.IsFalse() && synced.Reason == knitv1alpha1.ReasonCommitRejected &&
				strings.Contains(synced.Message, image) && strings.Contains(synced.Message, want)
			return ok, fmt.Sprintf("Synced %+v", synced)
		})
		svc, err := getService(context.Background(), ns, "hello")
		if err != nil || svc.Spec.Template.Name != "hello-"+first[:7] {
			t.Errorf("the rejected commit (%s) changed Service hello: %v", image, err)
		}
	}
}
