package forge

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// ErrRepoMismatch: a verified webhook describes a repository other than
// the one its hook's GitRepository tracks, e.g. an organisation-wide hook
// or a secret reused across repositories. The Receiver answers 403.
var ErrRepoMismatch = errors.New("webhook is for another repository")

// scpLike is git's [user@]host:path syntax, which has no scheme.
var scpLike = regexp.MustCompile(`^(?:[^@/]+@)?([^:/]+):(.+)$`)

// MatchRepository checks that forgeRepo, the repository's full name as a
// forge's payload gives it (owner/name, GitLab's group/sub/name), is the
// repository cloneURL points at. The comparison is on the path, case-
// insensitively, ".git" dropped; a forge served under a sub-path (a
// GitLab relative URL root) matches on the path's tail. The host is not
// compared: forges write their configured external URL into payloads,
// which need not be the address knit clones from. A payload that names
// no owner/repository does not match: it cannot be shown to be this one's.
func MatchRepository(forgeRepo, cloneURL string) error {
	want := strings.ToLower(strings.Trim(forgeRepo, "/"))
	path, err := repoPath(cloneURL)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRepoMismatch, err)
	}
	switch {
	case !strings.Contains(want, "/"):
		return fmt.Errorf("%w: the payload names no owner/repository (%q)", ErrRepoMismatch, forgeRepo)
	case path == want || strings.HasSuffix(path, "/"+want):
		return nil
	}
	return fmt.Errorf("%w: payload is for %q, the GitRepository tracks %q", ErrRepoMismatch, forgeRepo, path)
}

// repoPath is the lowercase repository path of a clone URL (https, ssh://
// or scp-like), without slashes around it or a ".git" suffix.
func repoPath(cloneURL string) (string, error) {
	var path string
	if u, err := url.Parse(cloneURL); err == nil && u.Scheme != "" && u.Host != "" {
		path = u.Path
	} else if m := scpLike.FindStringSubmatch(cloneURL); m != nil {
		path = m[2]
	} else {
		return "", fmt.Errorf("the GitRepository's URL has no repository path")
	}
	path = strings.TrimSuffix(strings.Trim(strings.ToLower(path), "/"), ".git")
	if path == "" {
		return "", fmt.Errorf("the GitRepository's URL has no repository path")
	}
	return path, nil
}
