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
//
// The cache stays bounded in disk and memory, whatever is pushed: a fetch
// stops once its pack passes Cache.MaxFetchBytes and keeps nothing of it
// (TooLargeError); a fetch that grew the repository enough collects its
// garbage, keeping only what the branch heads, the heads they replaced
// and the commits Cache.Retain names reach (gc.go); and large files are
// streamed from their pack when read, never held whole.
package source
