package gitrepository

import (
	"context"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/knitops/knit/gitsync/gitserver"
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
// whatever a GitRepository's url says; a repository's own credentials in
// spec.secretRef, when it has some, take precedence.
type GitServer struct {
	// URL is the server's base URL, http://<host>:<port>: the
	// repositories under <URL>/git/ are its.
	URL string
	// Token returns the server's token.
	Token func(context.Context) (string, error)
}

// auth is the token as Basic credentials when url is a repository of the
// server, nil otherwise.
func (g *GitServer) auth(ctx context.Context, url string) (transport.AuthMethod, error) {
	if g == nil || g.Token == nil || !gitserver.OnServer(g.URL, url) {
		return nil, nil
	}
	token, err := g.Token(ctx)
	if err != nil {
		return nil, err
	}
	return &githttp.BasicAuth{Username: "knit", Password: token}, nil
}
