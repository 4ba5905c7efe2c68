// Package gitrepository is the GitOps reconciler: it makes the cluster
// hold what each tracked branch of a GitRepository holds.
//
// A pass, for one repository (passes of different repositories run in
// parallel, each repository's are serialised by the controller's queue),
// is three phases and a report, each doing only its own work, as Flux
// splits source-controller from kustomize-controller:
//
//	fetch     the tracked branches and the heads of open pull requests into
//	          them (gitsync/source), only when the last fetch may be out of
//	          date: the spec changed, knit.dev/requested-at changed, a push
//	          or webhook triggered it, spec.interval elapsed, a pull request
//	          needs a branch or commit not fetched yet (fetch.go)
//	apply     only when what it reads changed since the last apply: the
//	          heads, the spec, each pull request's branches, state, share
//	          of traffic and preview readiness (changes.go):
//	  render    each branch head's kustomization from memory (gitsync/render)
//	  plan      name Services and Revisions after branch and commit (gitsync/plan)
//	  previews  stamp each open pull request's head Revision, add its tag
//	            and canary to the base branch's traffic once it is ready
//	  apply     server-side, dry run first so a rejected object changes nothing
//	  prune     what a later commit removed (the status inventory) and
//	            previews of closed pull requests
//	roll-up   every pass, from the cache only: RevisionsReady → Ready
//	report    each tracked branch's head gets the knit/deploy commit status
//	          on its forge (pending, success, failure) when it moved since
//	          the status recorded what was told (deploystatus.go)
//
// The apply phase records what it did for each open pull request in
// status.previews (outcomes.go), deploying ones included; the PullRequest
// reconciler turns that into the PullRequest's status, which this one
// only reads (a pull request's share of traffic), never writes.
//
// Watch predicates (predicates.go) drop the events no phase reads, so a
// Revision's or a pull request's status costs at most a roll-up: never a
// fetch, and an apply only when a preview's readiness or a canary's share
// moved. What the last fetch and apply saw is kept in memory; a restart
// fetches and applies once, and forgets nothing a status reports.
//
// What a sync may write is bounded twice. A commit may hold only the
// kinds its GitRepository allows (spec.allowedKinds, by default what a
// Knative app is made of), within the operator's ceiling (Identity's
// AllowedKinds, which spec.allowedKinds can narrow, never widen); never
// GitRepositories, RBAC or cluster-scoped objects (plan.Kinds), and
// Secrets only when SOPS-encrypted in Git, decrypted in memory with the
// repository's spec.decryption key (decryption.go), never over a Secret
// the repository did not deploy; in its namespace. And every write (apply, prune, previews) is made with
// the repository's identity: its spec.serviceAccountName impersonated, as
// Flux does, else the operator's default ServiceAccount of its namespace
// (identity.go), so the API server's RBAC has the last word. Only without
// a default (knit dev) does a sync write as knit itself.
//
// A bad commit (YAML, kustomize, admission) stops at its branch: the
// condition names the commit and the error, a dev.knit.sync.failed event
// goes out, and everything that served before keeps serving. Errors that
// retrying may cure (network, API) requeue with exponential backoff;
// otherwise the repository is polled every spec.interval, applied again
// every ten minutes (or spec.interval, if longer) to undo drift, and
// knit's Git server and forge webhooks trigger a fetch at once.
package gitrepository
