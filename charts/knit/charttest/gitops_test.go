//go:build !unit

package charttest

import (
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// An operator's gitopsRules are granted where a namespace binds them to
// its GitOps ServiceAccount (the knit-gitops ClusterRole), not to the
// controller in every namespace; only with gitopsServiceAccount empty,
// when syncs write as the controller, are they the controller's.
func TestGitOpsRulesArePerNamespace(t *testing.T) {
	rules := []string{"--set", "controller.gitopsRules[0].apiGroups[0]=apps", "--set", "controller.gitopsRules[0].resources[0]=deployments",
		"--set", "controller.gitopsRules[0].verbs={get,create,patch,delete}"}
	grants := func(role *rbacv1.ClusterRole) bool {
		return slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.Resources, "deployments") && slices.Contains(r.Verbs, "patch")
		})
	}

	m := render(t, rules...)
	controller, gitops := &rbacv1.ClusterRole{}, &rbacv1.ClusterRole{}
	m.into(t, "ClusterRole", "knit-controller", controller)
	m.into(t, "ClusterRole", "knit-gitops", gitops)
	if grants(controller) {
		t.Error("knit-controller may patch Deployments everywhere: gitopsRules must go to knit-gitops alone")
	}
	if !grants(gitops) {
		t.Errorf("knit-gitops lacks controller.gitopsRules: %+v", gitops.Rules)
	}
	args := strings.Join(deployment(t, m, "knit-controller").Spec.Template.Spec.Containers[0].Args, " ")
	for _, want := range []string{"--gitops-default-service-account=knit-gitops",
		"--gitops-allowed-kinds=Service.serving.knative.dev,Configuration.serving.knative.dev,Route.serving.knative.dev,ConfigMap,EventSink.knit.dev"} {
		if !strings.Contains(args, want) {
			t.Errorf("controller args %q lack %q", args, want)
		}
	}

	m = render(t, append(rules, "--set", "controller.gitopsServiceAccount=")...)
	if m.find("ClusterRole", "knit-gitops") != nil {
		t.Error("knit-gitops rendered although no sync impersonates anyone")
	}
	controller = &rbacv1.ClusterRole{}
	m.into(t, "ClusterRole", "knit-controller", controller)
	if !grants(controller) {
		t.Error("with gitopsServiceAccount empty the controller writes Git's kinds itself, yet lacks gitopsRules")
	}
}
