// Package forgeapi lets knit talk back to a pull request on its forge:
// commit statuses (knit/preview, knit/canary), one comment of knit's per
// purpose kept up to date in place, and the merge that follows a passed
// canary when the user asked for automerge.
//
// New makes one [Client] per repository from its clone URL and a token
// (both from the GitRepository and its Secret), speaking each forge's
// REST API with the standard library only:
//
//	           GitHub (api.github.com, <host>/api/v3)     Gitea, Forgejo (<host>/api/v1)            GitLab (<host>/api/v4)
//	status     POST /repos/o/r/statuses/{sha}              POST /repos/o/r/statuses/{sha}            POST /projects/{id}/statuses/{sha}
//	comments   GET  /repos/o/r/issues/{n}/comments         GET  /repos/o/r/issues/{n}/comments       GET  /projects/{id}/merge_requests/{iid}/notes
//	           PATCH /repos/o/r/issues/comments/{id}       PATCH /repos/o/r/issues/comments/{id}     PUT  /projects/{id}/merge_requests/{iid}/notes/{nid}
//	           POST /repos/o/r/issues/{n}/comments         POST /repos/o/r/issues/{n}/comments       POST /projects/{id}/merge_requests/{iid}/notes
//	merge      PUT  /repos/o/r/pulls/{n}/merge             POST /repos/o/r/pulls/{n}/merge {"Do"}    PUT  /projects/{id}/merge_requests/{iid}/merge
//	auth       Authorization: Bearer <token>               Authorization: token <token>              PRIVATE-TOKEN: <token>
//
// where {id} is GitLab's URL-escaped project path (group%2Fsub%2Fproject).
//
// # Failures
//
// A forge that is slow, rate limited or down must not stall a sync, so
// every call is bounded (Options.Retry) and its failure typed for the
// caller to record as a condition and retry on a later reconcile:
//
//   - 429, 5xx and network errors are retried with exponential backoff
//     and jitter, honouring Retry-After; a rate limit whose reset
//     (X-RateLimit-Reset on GitHub, RateLimit-Reset on GitLab) falls
//     within the retry budget is waited out, one beyond it fails at once
//     with a [*RateLimitError].
//   - Any other 4xx fails at once with an [*APIError] carrying the status
//     and the forge's own message.
//
// The token is sent only in its header, never to another host (redirects
// off the API's host are refused), and never appears in errors or logs.
package forgeapi
