package forgeapi

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/knitops/knit/gitsync/forge"
)

// endpoint is where a repository's API lives.
type endpoint struct {
	// base is the API's root URL without a trailing slash.
	base string
	// repo is the repository's path in API URLs (see Options.repo).
	repo string
}

// scpLike matches git's scp-like syntax, [user@]host:path, which has no
// scheme and whose path does not start with a slash after the colon
// ("host:/path" is scp-like too, but "C:\…" and "./a:b" are not worth
// guessing at).
var scpLike = regexp.MustCompile(`^(?:[^@/]+@)?([^:/]+):(.+)$`)

// apiSuffixes are the API roots knit knows, to find the web root (a Gitea
// ROOT_URL or GitLab relative_url_root) in an APIURL.
var apiSuffixes = []string{"/api/v1", "/api/v3", "/api/v4"}

// deriveEndpoint finds the API base and the repository's API path of
// repoURL, for provider, unless apiURL overrides the base.
func deriveEndpoint(provider forge.Forge, repoURL, apiURL string) (endpoint, error) {
	scheme, host, path, err := splitRepoURL(repoURL)
	if err != nil {
		return endpoint{}, err
	}
	segs := strings.Split(path, "/")
	for _, s := range segs {
		if s == "" || s == "." || s == ".." {
			return endpoint{}, fmt.Errorf("RepoURL %s: path %q is not a repository path", redactURL(repoURL), path)
		}
	}
	if len(segs) < 2 {
		return endpoint{}, fmt.Errorf("RepoURL %s: path %q names no owner/repository", redactURL(repoURL), path)
	}

	var base, prefix string
	if apiURL != "" {
		if base, err = checkAPIURL(apiURL); err != nil {
			return endpoint{}, err
		}
		// A forge under a sub-path serves clones there too: cut it off.
		u, _ := url.Parse(base)
		root := u.Path
		for _, s := range apiSuffixes {
			root = strings.TrimSuffix(root, s)
		}
		if r := strings.Trim(root, "/"); r != "" && strings.HasPrefix(path, r+"/") {
			segs = strings.Split(strings.TrimPrefix(path, r+"/"), "/")
		}
	}

	switch provider {
	case forge.ForgeGitLab:
		if base == "" {
			base = scheme + "://" + host + "/api/v4"
		}
		if len(segs) < 2 {
			return endpoint{}, fmt.Errorf("RepoURL %s names no group/project", redactURL(repoURL))
		}
		return endpoint{base: base, repo: url.PathEscape(strings.Join(segs, "/"))}, nil
	case forge.ForgeGitea:
		// A Gitea under a sub-path (ROOT_URL https://host/git/) keeps
		// owner/name last and its API under the sub-path.
		if len(segs) > 2 {
			prefix = "/" + strings.Join(segs[:len(segs)-2], "/")
			segs = segs[len(segs)-2:]
		}
		if base == "" {
			base = scheme + "://" + host + prefix + "/api/v1"
		}
	case forge.ForgeGitHub:
		if len(segs) != 2 {
			return endpoint{}, fmt.Errorf("RepoURL %s: GitHub repositories are owner/name, not %q", redactURL(repoURL), strings.Join(segs, "/"))
		}
		if base == "" {
			base = scheme + "://" + host + "/api/v3" // Enterprise Server
			if h := strings.ToLower(host); h == "github.com" || h == "www.github.com" {
				base = "https://api.github.com"
			}
		}
	default:
		return endpoint{}, fmt.Errorf("provider %q has no API", provider)
	}
	return endpoint{base: base, repo: url.PathEscape(segs[0]) + "/" + url.PathEscape(segs[1])}, nil
}

// splitRepoURL returns the web scheme, host and repository path (no
// slashes around it, no .git) of a clone URL. SSH and git:// URLs give
// https and the bare host name: their port is not the web server's.
func splitRepoURL(raw string) (scheme, host, path string, err error) {
	if raw == "" {
		return "", "", "", errors.New("RepoURL is required")
	}
	if !strings.Contains(raw, "://") {
		m := scpLike.FindStringSubmatch(raw)
		if m == nil {
			return "", "", "", fmt.Errorf("RepoURL %s is neither a URL nor user@host:path", redactURL(raw))
		}
		return "https", m[1], cleanRepoPath(m[2]), nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", "", fmt.Errorf("RepoURL %s: %w", redactURL(raw), errors.Unwrap(err))
	}
	if u.Host == "" {
		return "", "", "", fmt.Errorf("RepoURL %s has no host", redactURL(raw))
	}
	switch u.Scheme {
	case "http", "https":
		return u.Scheme, u.Host, cleanRepoPath(u.Path), nil
	case "ssh", "git", "git+ssh", "ssh+git":
		return "https", u.Hostname(), cleanRepoPath(u.Path), nil
	}
	return "", "", "", fmt.Errorf("RepoURL %s: scheme %q is not http, https, ssh or git", redactURL(raw), u.Scheme)
}

// cleanRepoPath trims slashes and a .git suffix.
func cleanRepoPath(p string) string {
	p = strings.Trim(p, "/")
	p = strings.TrimSuffix(p, ".git")
	return strings.TrimSuffix(p, "/")
}

// checkAPIURL returns apiURL without a trailing slash, or what is wrong.
func checkAPIURL(apiURL string) (string, error) {
	u, err := url.Parse(apiURL)
	switch {
	case err != nil:
		return "", fmt.Errorf("APIURL: %w", errors.Unwrap(err))
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("APIURL %s: scheme must be http or https", redactURL(apiURL))
	case u.Host == "":
		return "", fmt.Errorf("APIURL %s has no host", redactURL(apiURL))
	case u.User != nil:
		return "", fmt.Errorf("APIURL %s carries credentials; put them in Token", redactURL(apiURL))
	case u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("APIURL %s: no query or fragment, please", redactURL(apiURL))
	}
	return strings.TrimSuffix(apiURL, "/"), nil
}

// redactURL hides the password (or token) of a URL's userinfo, for
// messages. A string url.Parse rejects, or an scp-like one with a
// password, loses everything before the @ of its authority.
func redactURL(raw string) string {
	if strings.Contains(raw, "://") {
		if u, err := url.Parse(raw); err == nil {
			if u.User == nil {
				return raw
			}
			return u.Redacted()
		}
	}
	// Unparsable, or scp-like user[:password]@host:path.
	rest, scheme := raw, ""
	if i := strings.Index(raw, "://"); i >= 0 {
		scheme, rest = raw[:i+3], raw[i+3:]
	}
	authority := rest
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		authority = rest[:i]
	}
	if i := strings.LastIndexByte(authority, '@'); i >= 0 && (scheme != "" || strings.Contains(authority[:i], ":")) {
		return scheme + "xxxxx" + rest[i:]
	}
	return raw
}
