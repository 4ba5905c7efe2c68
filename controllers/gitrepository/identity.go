package gitrepository

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/plan"
)

// Identity is the operator's bound on what a sync writes, the same for
// every namespace.
//
// DefaultServiceAccount is Flux's --default-service-account: the
// ServiceAccount, in each GitRepository's own namespace, whose rights a
// sync writes with when the GitRepository names none. With it every sync
// impersonates an account of its namespace, so what Git may deploy is
// decided per namespace by whoever may bind Roles there, and knit's
// ClusterRole is never lent to a push; a namespace without the account
// (or without a RoleBinding for it) syncs nothing and says so. The chart
// sets it (knit-gitops). Empty, a GitRepository without
// spec.serviceAccountName writes as knit itself: knit dev does this, whose
// one user is cluster-admin anyway and whose `git push` must work with no
// RBAC set up.
//
// AllowedKinds is the ceiling on every GitRepository's spec.allowedKinds
// (plan.Kinds.Ceiling): a GitRepository's editor can narrow it, never
// widen it. Empty is plan.DefaultAllowedKinds.
//
// The ServiceAccount a pushed Service's replicas run as
// (spec.template.spec.serviceAccountName) is not checked against the
// sync's identity: as in Kubernetes and Knative, whoever may create a
// workload in a namespace may run it as any ServiceAccount there (the
// pods are made by knit's controllers, and RBAC has no verb for "use").
// A namespace whose ServiceAccounts hold rights Git must not reach should
// not be the namespace Git deploys into.
type Identity struct {
	DefaultServiceAccount string
	AllowedKinds          []string
}

// identities are the clients a sync writes with, one per ServiceAccount a
// sync impersonates (spec.serviceAccountName, else the default), each as
// system:serviceaccount:<namespace>:<name>, as Flux's kustomize-controller
// does: the API server then checks every apply, prune and preview against
// that account's RBAC, so a commit can create only what the account may,
// in its own namespace. Reads stay knit's (the manager's cache): only
// writes carry a repository's identity.
type identities struct {
	config *rest.Config
	opts   client.Options
	// defaultSA is Identity.DefaultServiceAccount.
	defaultSA string

	mu      sync.Mutex
	clients map[string]client.Client // by user name
}

func newIdentities(config *rest.Config, opts client.Options, defaultSA string) *identities {
	return &identities{config: config, opts: opts, defaultSA: defaultSA, clients: map[string]client.Client{}}
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

// serviceAccount is whom repo's sync writes as: its own
// spec.serviceAccountName, else the default; "" for knit itself.
func (r *Reconciler) serviceAccount(repo *knitv1alpha1.GitRepository) (name string, isDefault bool) {
	switch {
	case r.identities == nil:
		return "", false
	case repo.Spec.ServiceAccountName != "":
		return repo.Spec.ServiceAccountName, false
	}
	return r.identities.defaultSA, r.identities.defaultSA != ""
}

// writer is the client repo's sync writes with: impersonating its
// ServiceAccount (serviceAccount), or knit's own when there is none. A
// refusal of the API server comes back as an identityError, which says
// whose rights the write was made with and how to change them.
func (r *Reconciler) writer(repo *knitv1alpha1.GitRepository) (client.Client, error) {
	sa, isDefault := r.serviceAccount(repo)
	if sa == "" {
		return r.client, nil
	}
	c, err := r.identities.as("system:serviceaccount:" + repo.Namespace + ":" + sa)
	if err != nil {
		return nil, err
	}
	ref := identityRef{repo: repo.Namespace + "/" + repo.Name, serviceAccount: sa, isDefault: isDefault}
	return &identityClient{Client: c, ref: ref}, nil
}

// identityRef names the identity a write was made with, for its errors.
type identityRef struct {
	repo, serviceAccount string
	isDefault            bool
}

// identityClient is an impersonating client whose Forbidden errors say
// whose rights were lacking (identityError).
type identityClient struct {
	client.Client
	ref identityRef
}

func (c *identityClient) wrap(err error) error {
	if err == nil || !apierrors.IsForbidden(err) {
		return err
	}
	return &identityError{identityRef: c.ref, err: err}
}

func (c *identityClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	return c.wrap(c.Client.Apply(ctx, obj, opts...))
}

func (c *identityClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return c.wrap(c.Client.Create(ctx, obj, opts...))
}

func (c *identityClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.wrap(c.Client.Patch(ctx, obj, patch, opts...))
}

func (c *identityClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.wrap(c.Client.Update(ctx, obj, opts...))
}

func (c *identityClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.wrap(c.Client.Delete(ctx, obj, opts...))
}

// asIdentity adds to a refusal of the API server whose rights the write
// was made with and how to change them (identityError). Writes through
// writer's client already carry it; this covers repositories naming a
// ServiceAccount whose error came some other way.
func asIdentity(repo *knitv1alpha1.GitRepository, err error) error {
	var ie *identityError
	if err == nil || repo.Spec.ServiceAccountName == "" || !apierrors.IsForbidden(err) || errors.As(err, &ie) {
		return err
	}
	return &identityError{identityRef: identityRef{repo: repo.Namespace + "/" + repo.Name, serviceAccount: repo.Spec.ServiceAccountName}, err: err}
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
	identityRef
	err error
}

func (e *identityError) Error() string {
	if e.isDefault {
		return fmt.Sprintf("%v (GitRepository %s names no spec.serviceAccountName, so it writes as this cluster's default GitOps ServiceAccount %q of its namespace "+
			"(knit controller --gitops-default-service-account): create that ServiceAccount and bind it a Role allowing this, e.g. the ClusterRole knit-gitops, or name another ServiceAccount)",
			e.err, e.repo, e.serviceAccount)
	}
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

// kinds is what repo's commits may deploy: its spec.allowedKinds within
// the operator's ceiling.
func (r *Reconciler) kinds(repo *knitv1alpha1.GitRepository) plan.Kinds {
	return plan.Kinds{Allowed: repo.Spec.AllowedKinds, Ceiling: r.allowedKinds, Repository: repo.Namespace + "/" + repo.Name}
}
