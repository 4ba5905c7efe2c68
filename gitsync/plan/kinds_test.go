package plan

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestKinds(t *testing.T) {
	gk := func(kind, group string) schema.GroupKind { return schema.GroupKind{Group: group, Kind: kind} }
	custom := []string{"Service.serving.knative.dev", "Deployment.apps", "ServiceAccount", "Secret", "GitRepository.knit.dev", "Role.rbac.authorization.k8s.io"}
	for _, tc := range []struct {
		name    string
		allowed []string
		gk      schema.GroupKind
		want    string // "" allowed, else part of the refusal
	}{
		{"a Knative Service", nil, gk("Service", "serving.knative.dev"), ""},
		{"a Configuration", nil, gk("Configuration", "serving.knative.dev"), ""},
		{"a Route", nil, gk("Route", "serving.knative.dev"), ""},
		{"a ConfigMap", nil, gk("ConfigMap", ""), ""},
		{"an EventSink", nil, gk("EventSink", "knit.dev"), ""},
		{"a Revision", nil, gk("Revision", "serving.knative.dev"), `add "Revision.serving.knative.dev" to spec.allowedKinds of GitRepository team/app`},
		{"a Kubernetes Service", nil, gk("Service", ""), `add "Service" to spec.allowedKinds`},
		{"a Deployment by default", nil, gk("Deployment", "apps"), `add "Deployment.apps" to spec.allowedKinds`},
		{"a PullRequest", nil, gk("PullRequest", "knit.dev"), `add "PullRequest.knit.dev"`},
		{"a Secret", nil, gk("Secret", ""), "kind Secret is never deployed from Git"},
		{"a GitRepository", nil, gk("GitRepository", "knit.dev"), "kind GitRepository.knit.dev is never deployed from Git"},
		{"a RoleBinding", nil, gk("RoleBinding", "rbac.authorization.k8s.io"), "never deployed from Git"},
		{"a ClusterRole", nil, gk("ClusterRole", "rbac.authorization.k8s.io"), "never deployed from Git"},
		{"a listed Deployment", custom, gk("Deployment", "apps"), ""},
		{"a listed ServiceAccount", custom, gk("ServiceAccount", ""), ""},
		{"a listed Knative Service", custom, gk("Service", "serving.knative.dev"), ""},
		{"the list replaces the defaults", custom, gk("ConfigMap", ""), "it allows Service.serving.knative.dev, Deployment.apps,"},
		{"a listed Secret", custom, gk("Secret", ""), "never deployed from Git"},
		{"a listed GitRepository", custom, gk("GitRepository", "knit.dev"), "never deployed from Git"},
		{"a listed Role", custom, gk("Role", "rbac.authorization.k8s.io"), "never deployed from Git"},
		{"a Secret of another group is another kind", nil, gk("Secret", "example.com"), "kind Secret.example.com is not among the kinds this cluster lets Git deploy"},
		{"kinds are case-sensitive", nil, gk("configmap", ""), "kind configmap is not among the kinds this cluster lets Git deploy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A ceiling wide enough that the repository's list decides.
			ceiling := append(slices.Clone(DefaultAllowedKinds), custom...)
			ceiling = append(ceiling, "Revision.serving.knative.dev", "Service", "PullRequest.knit.dev")
			err := Kinds{Allowed: tc.allowed, Ceiling: ceiling, Repository: "team/app"}.Check(tc.gk)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check(%v) = %v, want allowed", tc.gk, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Check(%v) = %v, want a refusal saying %q", tc.gk, err, tc.want)
			}
		})
	}
}

// The operator's ceiling bounds what any repository may allow: a
// GitRepository's spec.allowedKinds only narrows it, so whoever may edit
// a GitRepository cannot widen what Git deploys, and with no ceiling set
// it is DefaultAllowedKinds.
func TestKindsCeiling(t *testing.T) {
	gk := func(kind, group string) schema.GroupKind { return schema.GroupKind{Group: group, Kind: kind} }
	operator := []string{"Service.serving.knative.dev", "ConfigMap", "Deployment.apps"}
	for _, tc := range []struct {
		name             string
		ceiling, allowed []string
		gk               schema.GroupKind
		want             string // "" allowed, else part of the refusal
	}{
		{"a default kind under no ceiling", nil, nil, gk("Service", "serving.knative.dev"), ""},
		{"a kind listed but beyond the default ceiling", nil, []string{"Deployment.apps"}, gk("Deployment", "apps"),
			"kind Deployment.apps is not among the kinds this cluster lets Git deploy (Service.serving.knative.dev, Configuration.serving.knative.dev"},
		{"a ServiceAccount listed but beyond the ceiling", operator, []string{"ServiceAccount", "ConfigMap"}, gk("ServiceAccount", ""),
			"knit controller --gitops-allowed-kinds"},
		{"a kind within the ceiling and listed", operator, []string{"Deployment.apps"}, gk("Deployment", "apps"), ""},
		{"the defaults are clipped to the ceiling", operator, nil, gk("Route", "serving.knative.dev"), "not among the kinds this cluster lets Git deploy"},
		{"a default within the ceiling", operator, nil, gk("ConfigMap", ""), ""},
		{"a kind within the ceiling the repository does not list", operator, []string{"ConfigMap"}, gk("Deployment", "apps"),
			`add "Deployment.apps" to spec.allowedKinds of GitRepository team/app`},
		{"never from Git, whatever the ceiling", []string{"Secret"}, []string{"Secret"}, gk("Secret", ""), "never deployed from Git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Kinds{Allowed: tc.allowed, Ceiling: tc.ceiling, Repository: "team/app"}.Check(tc.gk)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check(%v) = %v, want allowed", tc.gk, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Check(%v) = %v, want a refusal saying %q", tc.gk, err, tc.want)
			}
		})
	}
}

// Objects refuses a commit holding a kind its repository does not allow,
// naming every such object.
func TestObjectsRefuseKinds(t *testing.T) {
	docs := []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n",
		"apiVersion: knit.dev/v1alpha1\nkind: GitRepository\nmetadata: {name: steal}\nspec: {url: 'http://127.0.0.1:1/steal.git', secretRef: {name: s}}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
	}
	var rendered []*unstructured.Unstructured
	for _, d := range docs {
		rendered = append(rendered, parse(t, d))
	}
	_, err := Objects(Input{Commit: commit(sha1), Rendered: rendered, Kinds: Kinds{Repository: "default/hello", Ceiling: append(slices.Clone(DefaultAllowedKinds), "Deployment.apps")}, Namespaced: namespacedAll})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
	for _, want := range []string{"Secret s: a Secret in Git must be SOPS-encrypted", "GitRepository.knit.dev steal: kind GitRepository.knit.dev is never deployed",
		`Deployment.apps d: kind Deployment.apps is not allowed from this repository`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "ConfigMap c") {
		t.Errorf("err = %v names the allowed ConfigMap", err)
	}
}
