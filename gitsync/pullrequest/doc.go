// Package pullrequest is knit's one model of a pull request: forge
// webhooks (GitHub, GitLab, Gitea, generic) and `knit pr` both write
// PullRequest resources through it, named <repository>-<number>, and the
// GitRepository sync turns an open one into a tagged preview with an
// optional canary share.
package pullrequest
