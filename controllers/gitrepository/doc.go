// Package gitrepository is the GitOps reconciler: it makes the cluster
// hold what each tracked branch of a GitRepository holds.
//
// One pass, for one repository (passes of different repositories run in
// parallel, each repository's are serialised by the controller's queue):
//
//	fetch     the tracked branches and open pull requests' heads (gitsync/source)
//	render    each branch head's kustomization from memory (gitsync/render)
//	plan      name Services and Revisions after branch and commit (gitsync/plan)
//	previews  stamp each open pull request's head Revision, add its tag
//	          and canary to the base branch's traffic once it is ready
//	apply     server-side, dry run first so a rejected object changes nothing
//	prune     what a later commit removed (the status inventory) and
//	          previews of closed pull requests
//	status    Fetched, Synced, RevisionsReady → Ready, per-branch commits
//
// A bad commit (YAML, kustomize, admission) stops at its branch: the
// condition names the commit and the error, a dev.knit.sync.failed event
// goes out, and everything that served before keeps serving. Errors that
// retrying may cure (network, API) requeue with exponential backoff;
// otherwise the repository is polled every spec.interval, and knit's Git
// server and forge webhooks trigger a pass at once.
package gitrepository
