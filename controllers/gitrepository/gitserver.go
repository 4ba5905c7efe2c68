package gitrepository

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/gitserver"
	"github.com/knitops/knit/gitsync/hub"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// GitServer is knit's own Git server as the reconciler fetches from it:
// the GitRepositories a push creates point there, and it answers nobody
// without its token.
//
// The reconciler is handed the token by its own process (knit dev keeps
// it in memory; on a cluster it reads the Secret in knit's namespace the
// Git server made, through the API, on each fetch) instead of finding it
// in a Secret the hub would copy into the namespace pushes deploy to
// (spec.secretRef). A copy there would be readable by everyone who may
// read Secrets in that namespace, and would let them push, and so run
// code, through every repository of the server. The token is sent only
// to the server's own URL (gitserver.OnServer), never to another host,
// whatever a GitRepository's url says, and only for GitRepositories of the
// namespace owning the repository (Owners): the token opens every
// repository of the server, so without that check anyone who may create a
// GitRepository could read every repository by naming it. A repository's
// own credentials in spec.secretRef, when it has some, take precedence.
type GitServer struct {
	// URL is the server's base URL, http://<host>:<port>: the
	// repositories under <URL>/git/ are its.
	URL string
	// Token returns the server's token.
	Token func(context.Context) (string, error)
	// Owners says which namespace each repository belongs to (the Git
	// server's own); Default empty means hub.DefaultNamespace.
	Owners gitserver.Owners
}

// auth is the token as Basic credentials when repo's URL is a repository
// of the server that belongs to repo's namespace, nil when the URL is not
// the server's; a repository of another namespace is refused, and the
// token is not read for it.
func (g *GitServer) auth(ctx context.Context, repo *knitv1alpha1.GitRepository) (transport.AuthMethod, error) {
	if g == nil || g.Token == nil || !gitserver.OnServer(g.URL, repo.Spec.URL) {
		return nil, nil
	}
	name, ok := gitserver.RepoName(g.URL, repo.Spec.URL)
	if !ok {
		return nil, &accessError{reason: ReasonNotRepositoryOwner, msg: fmt.Sprintf(
			"spec.url %s is on knit's Git server but names no repository (%s/git/<name>.git)", gitsource.RedactURL(repo.Spec.URL), g.URL)}
	}
	if owner := g.owners().Namespace(name); owner != repo.Namespace {
		return nil, &accessError{reason: ReasonNotRepositoryOwner, msg: fmt.Sprintf(
			"repository %s on knit's Git server belongs to namespace %s, not %s: only GitRepositories there fetch it "+
				"(an operator assigns repositories to namespaces with the Helm value gitserver.repositoryNamespaces)", name, owner, repo.Namespace)}
	}
	token, err := g.Token(ctx)
	if err != nil {
		return nil, err
	}
	return &githttp.BasicAuth{Username: "knit", Password: token}, nil
}

// owners is Owners with its default filled in.
func (g *GitServer) owners() gitserver.Owners {
	o := g.Owners
	if o.Default == "" {
		o.Default = hub.DefaultNamespace
	}
	return o
}
