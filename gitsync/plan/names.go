package plan

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/knitops/knit/internal/names"
)

// Labels and annotations knit puts on what it applies from Git.
const (
	// RepositoryLabel names the GitRepository an object came from.
	RepositoryLabel = "knit.dev/repository"
	// BranchLabel names the branch an object came from.
	BranchLabel = "knit.dev/branch"
	// PullRequestLabel numbers the pull request a Revision previews.
	PullRequestLabel = "knit.dev/pull-request"
	// CommitAnnotation is the full SHA an object (or Revision) was applied from.
	CommitAnnotation = "knit.dev/commit"
	// AuthorAnnotation is the commit's author, "Name <email>".
	AuthorAnnotation = "knit.dev/author"
	// MessageAnnotation is the first line of the commit message.
	MessageAnnotation = "knit.dev/message"
	// TemplateHashAnnotation fingerprints the template as Git rendered it,
	// so an unchanged template keeps its Revision across commits.
	TemplateHashAnnotation = "knit.dev/template-hash"
)

// shortSHA is how much of a commit SHA a Revision name carries, as git log --oneline.
const shortSHA = 7

// RevisionName is the Revision a commit stamps for a Service:
// <service>-<sha7>, shortened as Knative shortens derived names when it
// passes 63 characters.
func RevisionName(service, sha string) string {
	return join(service, short(sha))
}

// PullRequestRevisionName is the Revision previewing pull request number
// at commit sha: <service>-pr<N>-<sha7>. It never collides with a branch
// commit's Revision, even when a fast-forward merge lands the same SHA.
func PullRequestRevisionName(service string, number int64, sha string) string {
	return join(service, fmt.Sprintf("pr%d-%s", number, short(sha)))
}

// Tag is the traffic tag of pull request number: pr-<N>, reachable at
// pr-<N>-<service>.<namespace>.<domain>.
func Tag(number int64) string { return fmt.Sprintf("pr-%d", number) }

// ServiceName is what a Service rendered from branch is called: its own
// name on the main branch, <name>-<branch> on any other.
func ServiceName(name, branch string, main bool) string {
	if main {
		return name
	}
	return join(name, dnsLabel(branch))
}

func short(sha string) string {
	if len(sha) > shortSHA {
		return sha[:shortSHA]
	}
	return sha
}

// join is prefix-suffix by Knative's rule (names.Child): past 63
// characters the prefix is cut and its md5 added, never the suffix, which
// carries the identity; two long prefixes that share a head still give
// two names.
func join(prefix, suffix string) string { return names.Child(prefix, "-"+suffix) }

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// dnsLabel makes a branch name usable in a Service name: feature/Login_2
// becomes feature-login-2.
func dnsLabel(s string) string {
	s = notDNS.ReplaceAllString(strings.ToLower(s), "-")
	s = strings.Trim(s, "-")
	if len(s) > 30 {
		s = strings.TrimRight(s[:30], "-")
	}
	if s == "" {
		s = "branch"
	}
	return s
}
