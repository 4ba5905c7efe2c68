// Package pullrequest closes the loop of a pull request with its forge and
// its traffic. The GitRepository reconciler deploys a pull request's head
// as a tagged preview; this one
//
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
// controller.go wires it, pullrequest.go runs the phases, step.go is the
// canary's state machine and report.go what the forge is told: the last two
// are pure and table-tested.
package pullrequest
