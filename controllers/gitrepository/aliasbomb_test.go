//go:build !unit

package gitrepository

import (
	"context"
	"fmt"
	"strings"
	"testing"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// laughs is a YAML alias bomb of about 550 bytes: ten anchors of ten
// aliases each, a billion nodes once every alias is copied.
func laughs() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n  l0: &l0 lol\n")
	for i := 1; i <= 9; i++ {
		alias := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(alias+",", 10), ","))
	}
	return b.String()
}

// A pushed alias bomb is refused before kustomize expands it: Synced says
// CommitRejected naming the commit, the file and the limit, the Service
// keeps the last good commit's revision, and the controller (which serves
// the admission webhooks too) stays up to sync the fix.
func TestAliasBombIsRefused(t *testing.T) {
	ns := newNamespace(t)
	g := newGitRepo(t)
	first := g.commit("Say hello", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "service.yaml": serviceYAML("World")})
	createRepo(t, ns, "hello", g.dir)
	waitTemplate(t, ns, "hello-"+first[:7])

	bomb := g.commit("Laugh", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n  - lol.yaml\n", "lol.yaml": laughs()})
	trigger(ns, "hello")
	eventually(t, "Synced=False naming the commit and the file", func(ctx context.Context) (bool, string) {
		c, _ := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
		if c == nil {
			return false, "no condition"
		}
		return c.IsFalse() && c.Reason == knitv1alpha1.ReasonCommitRejected && strings.Contains(c.Message, bomb[:7]) &&
			strings.Contains(c.Message, "lol.yaml: YAML aliases expand to more than") && strings.Contains(c.Message, "keeps serving"), c.Message
	})
	if svc, err := getService(context.Background(), ns, "hello"); err != nil || svc.Spec.Template.Name != "hello-"+first[:7] {
		t.Errorf("the alias bomb %s changed Service hello: %v", bomb[:7], err)
	}

	g.commit("Stop laughing", map[string]string{"kustomization.yaml": "resources:\n  - service.yaml\n", "lol.yaml": ""})
	trigger(ns, "hello")
	eventually(t, "Synced=True again", func(ctx context.Context) (bool, string) {
		c, _ := repoCondition(ctx, ns, "hello", knitv1alpha1.GitRepositoryConditionSynced)
		return c != nil && c.IsTrue(), fmt.Sprintf("Synced %+v", c)
	})
}
