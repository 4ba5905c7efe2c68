// Package source keeps a local copy of every Git repository knit deploys
// from. It is the one place go-git's transport lives: Fetch brings the
// tracked branches of a remote (knit's own Git server, GitHub, GitLab, any
// URL) into a bare cache repository under the state directory, Commit reads
// a commit's tree for rendering, and Checkout writes a commit's files to a
// directory keyed by its SHA, where ko:// images are built from exactly
// what was pushed.
//
// Each Cache is safe for concurrent use; fetches of one repository are
// serialised, fetches of different repositories run in parallel.
package source
