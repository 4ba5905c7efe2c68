// Package pullrequest closes the loop of a pull request with its forge and
// its traffic. The GitRepository reconciler deploys a pull request's head
// as a tagged preview and records what it did in the repository's
// status.previews; this one
//
//   - is the only writer of the PullRequest's status: its tag, revision,
//     base Service, URL (the tag's on the base Service's routes) and Ready
//     condition come from that record (status.go), so a restart of either
//     controller loses none of it and their writes never conflict;
//   - tells the forge: a knit/preview commit status (pending, then success
//     with the preview URL, or failure with the reason) and one comment,
//     edited in place on every push, with the URL, revision and commit;
//   - runs the stepped canary a user asked for (a line in the description,
//     a label, or a knit.dev/canary annotation): each step gives the head a
//     share of the base Service's traffic for an interval, then compares
//     the head's and the stable revision's queue-proxy metrics; a pass moves
//     on, a failure sends the share back to 0 % at once, says why on the
//     pull request and as a dev.knit.canary.failed CloudEvent, and waits
//     for the next push. All steps passed marks knit/canary success and,
//     when asked, merges through the forge.
//
// Who may ask for what (trust.go): a pull request from a fork gets no
// preview, canary traffic or merge until a maintainer adds the approval
// label (knit/approved) for its head commit, and a push after that needs
// the label again; automerge is read only from the knit/automerge label;
// thresholds written in the description or the head's annotation may
// only be stricter than the defaults, and a fork's are not read. A merge
// is pinned to the analysed commit, and the forge's answers never reach
// the PullRequest's status, only knit's summary of them.
//
// controller.go wires it, pullrequest.go runs the phases, status.go is what
// the status says of the preview, step.go is the canary's state machine and
// report.go what the forge is told: the last three are pure and
// table-tested.
package pullrequest
