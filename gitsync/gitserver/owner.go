package gitserver

import (
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Owners says which namespace each repository of the server belongs to.
// Only GitRepositories in that namespace are fetched with the server's
// token, and a push syncs only GitRepositories there: a GitRepository in
// any other namespace that names the repository gets neither its code nor
// its pushes.
//
// Ownership is configuration, not state: the Git server and the controller
// run in different processes (pods on a cluster) and both compute it from
// the same values (Helm's gitserver.namespace and
// gitserver.repositoryNamespaces), so nothing can drift between the Git
// server's volume and the controller, and nothing a tenant writes (an
// object, an annotation, a first GitRepository naming the repository)
// changes it.
type Owners struct {
	// Default owns every repository Repos does not name: the namespace a
	// first push creates its GitRepository in.
	Default string
	// Repos assigns repositories, by name, to other namespaces.
	Repos map[string]string
}

// Namespace is the namespace owning repository name.
func (o Owners) Namespace(name string) string {
	if ns, ok := o.Repos[name]; ok {
		return ns
	}
	return o.Default
}

// ParseOwners reads an operator's assignments, "repo=namespace" separated
// by commas (empty items are skipped); a repository named twice is an
// error, so an assignment is never silently dropped.
func ParseOwners(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, ns, ok := strings.Cut(item, "=")
		name, ns = strings.TrimSpace(name), strings.TrimSpace(ns)
		if !ok {
			return nil, fmt.Errorf("repository namespace %q: want repo=namespace", item)
		}
		if err := ValidateName(name); err != nil {
			return nil, err
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, fmt.Errorf("namespace %q of repository %s: %s", ns, name, strings.Join(errs, "; "))
		}
		if had, dup := out[name]; dup {
			return nil, fmt.Errorf("repository %s is assigned twice (%s and %s)", name, had, ns)
		}
		out[name] = ns
	}
	return out, nil
}

// RepoName is the name of the repository repoURL names on the server whose
// base URL is base, read the way the server routes it (the path segment
// after the prefix, ".git" trimmed); ok is false when repoURL is not on the
// server (OnServer) or names no valid repository.
func RepoName(base, repoURL string) (name string, ok bool) {
	if !OnServer(base, repoURL) {
		return "", false
	}
	b, _ := url.Parse(base)
	r, _ := url.Parse(repoURL)
	rest := strings.TrimPrefix(r.Path, strings.TrimSuffix(b.Path, "/")+DefaultPathPrefix+"/")
	name, _, _ = strings.Cut(rest, "/")
	name = strings.TrimSuffix(name, ".git")
	return name, ValidateName(name) == nil
}
