package gitserver

import (
	"context"
	"fmt"
	"net/http"
	"os"
)

// advertiseEmpty asks git, once, what receive-pack advertises for an
// empty repository (no refs, its capabilities), from a repository made
// and removed outside Root.
func (s *Server) advertiseEmpty(ctx context.Context) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "knit-git-empty-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if _, err := s.git(ctx, "init", "--quiet", "--bare", "--initial-branch=main", tmp); err != nil {
		return nil, err
	}
	refs, err := s.git(ctx, "receive-pack", "--stateless-rpc", "--advertise-refs", tmp)
	if err != nil {
		return nil, err
	}
	return refs, nil
}

// serveEmptyRefs answers info/refs?service=git-receive-pack for a
// repository that does not exist yet as http-backend answers it for an
// empty one, so that git goes on to push, and nothing is made on disk
// until it does.
func (s *Server) serveEmptyRefs(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/x-git-receive-pack-advertisement")
	h.Set("Cache-Control", "no-cache, max-age=0, must-revalidate")
	h.Set("Expires", "Fri, 01 Jan 1980 00:00:00 GMT")
	h.Set("Pragma", "no-cache")
	line := "# service=" + receivePack + "\n"
	fmt.Fprintf(w, "%04x%s0000", len(line)+4, line)
	_, _ = w.Write(s.emptyRefs)
}
