package gitrepository

import (
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/plan"
)

// identities are the clients a sync writes with, one per ServiceAccount a
// GitRepository names in spec.serviceAccountName, each impersonating
// system:serviceaccount:<namespace>:<name> as Flux's kustomize-controller
// does: the API server then checks every apply, prune and preview against
// that account's RBAC, so a commit can create only what the account may,
// in its own namespace. Writing as knit itself (no serviceAccountName)
// leaves the kinds a commit may hold (spec.allowedKinds) as the limit.
// Reads stay knit's (the manager's cache): only writes carry a
// repository's identity.
type identities struct {
	config *rest.Config
	opts   client.Options

	mu      sync.Mutex
	clients map[string]client.Client // by user name
}

func newIdentities(config *rest.Config, opts client.Options) *identities {
	return &identities{config: config, opts: opts, clients: map[string]client.Client{}}
}

// as is the client impersonating user, made once.
func (ids *identities) as(user string) (client.Client, error) {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if c, ok := ids.clients[user]; ok {
		return c, nil
	}
	cfg := rest.CopyConfig(ids.config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, ids.opts)
	if err != nil {
		return nil, fmt.Errorf("client impersonating %s: %w", user, err)
	}
	ids.clients[user] = c
	return c, nil
}

// writer is the client repo's sync writes with: its ServiceAccount's
// when it names one, knit's own otherwise.
func (r *Reconciler) writer(repo *knitv1alpha1.GitRepository) (client.Client, error) {
	if repo.Spec.ServiceAccountName == "" || r.identities == nil {
		return r.client, nil
	}
	return r.identities.as("system:serviceaccount:" + repo.Namespace + ":" + repo.Spec.ServiceAccountName)
}

// asIdentity adds to a refusal of the API server whose rights the write
// was made with and how to change them (identityError).
func asIdentity(repo *knitv1alpha1.GitRepository, err error) error {
	if err == nil || repo.Spec.ServiceAccountName == "" || !apierrors.IsForbidden(err) {
		return err
	}
	return &identityError{repo: repo.Namespace + "/" + repo.Name, serviceAccount: repo.Spec.ServiceAccountName, err: err}
}

// ReasonForbidden is Synced's reason when the repository's ServiceAccount
// may not write what a commit holds (identityError).
const ReasonForbidden = "Forbidden"

// identityError is a write the repository's ServiceAccount may not make.
// The commit is not wrong, the account's rights are: the branch keeps
// what it served, the condition says so, and the apply is tried again at
// the next poll (spec.interval) or push rather than only after the next
// commit, so granting the rights is enough.
type identityError struct {
	repo, serviceAccount string
	err                  error
}

func (e *identityError) Error() string {
	return fmt.Sprintf("%v (GitRepository %s writes as its spec.serviceAccountName %q: grant that ServiceAccount a Role allowing this, or name another)",
		e.err, e.repo, e.serviceAccount)
}

func (e *identityError) Unwrap() error { return e.err }

// lacksRights reports whether err is the repository's ServiceAccount
// lacking a right.
func lacksRights(err error) bool {
	var ie *identityError
	return errors.As(err, &ie)
}

// kinds is what repo's commits may deploy.
func kinds(repo *knitv1alpha1.GitRepository) plan.Kinds {
	return plan.Kinds{Allowed: repo.Spec.AllowedKinds, Repository: repo.Namespace + "/" + repo.Name}
}
