package plan

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultAllowedKinds are what a commit may deploy when its GitRepository
// lists no spec.allowedKinds: what a Knative app is made of, its
// configuration, and where its events go.
var DefaultAllowedKinds = []string{
	"Service.serving.knative.dev",
	"Configuration.serving.knative.dev",
	"Route.serving.knative.dev",
	"ConfigMap",
	"EventSink.knit.dev",
}

// Kinds is what one GitRepository's commits may deploy: its
// spec.allowedKinds (DefaultAllowedKinds when empty) within the
// operator's Ceiling, less what is never deployed from Git
// (NeverFromGit). The zero Kinds allows the defaults.
//
// The ceiling is there because whoever may edit a GitRepository chooses
// its allowedKinds: were they the limit, any kind the sync's identity may
// write (knit's own ClusterRole, which an operator widens for one team)
// would be one edit away for every namespace. spec.allowedKinds can only
// narrow what the operator allows.
type Kinds struct {
	// Allowed are Kind.group strings ("Deployment.apps", "ConfigMap").
	Allowed []string
	// Ceiling are the kinds the operator lets any repository deploy
	// (knit controller --gitops-allowed-kinds); empty is
	// DefaultAllowedKinds.
	Ceiling []string
	// Repository is the GitRepository, namespace/name, as refusals name
	// it.
	Repository string
}

// NeverFromGit reports the kinds no GitRepository may deploy, whatever it
// allows: a GitRepository (it could send an existing Secret's
// credentials to any URL), a Secret (it could overwrite another
// repository's credentials or a service account's token), and RBAC
// (rights are granted by people, not by pushes). Cluster-scoped kinds are
// refused by Objects on their own. The one way around it is a Secret that
// was SOPS-encrypted in Git, which Objects checks apart (checkSecret) and
// the apply never lets take over a Secret it did not deploy.
func NeverFromGit(gk schema.GroupKind) bool {
	switch {
	case gk.Group == "rbac.authorization.k8s.io":
		return true
	case isSecret(gk):
		return true
	case gk.Group == "knit.dev" && gk.Kind == "GitRepository":
		return true
	}
	return false
}

// KindString spells gk as spec.allowedKinds does: Kind.group, or Kind
// alone in the core group.
func KindString(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// Check says why an object of kind gk may not be deployed, nil when it
// may. The error tells the user what to do: nothing for a kind never
// deployed from Git, else the line to add to spec.allowedKinds.
func (k Kinds) Check(gk schema.GroupKind) error {
	kind := KindString(gk)
	if NeverFromGit(gk) {
		return fmt.Errorf("kind %s is never deployed from Git: GitRepositories, Secrets and RBAC would let a push reach credentials and rights; create it with kubectl", kind)
	}
	ceiling := k.Ceiling
	if len(ceiling) == 0 {
		ceiling = DefaultAllowedKinds
	}
	if !slices.Contains(ceiling, kind) {
		return fmt.Errorf("kind %s is not among the kinds this cluster lets Git deploy (%s): spec.allowedKinds of GitRepository %s can only narrow them; "+
			"ask the operator to add it to knit controller --gitops-allowed-kinds (chart value controller.gitopsAllowedKinds)",
			kind, strings.Join(ceiling, ", "), k.Repository)
	}
	allowed := k.Allowed
	if len(allowed) == 0 {
		allowed = DefaultAllowedKinds
	}
	if slices.Contains(allowed, kind) {
		return nil
	}
	return fmt.Errorf("kind %s is not allowed from this repository (it allows %s): add %q to spec.allowedKinds of GitRepository %s",
		kind, strings.Join(allowed, ", "), kind, k.Repository)
}
