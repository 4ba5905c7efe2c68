// Package announce tells the user's EventSinks what happened to what they
// pushed, as CloudEvents (delivery, retries and buffering are
// gitsync/events' job):
//
//	dev.knit.revision.ready   a Revision deployed from Git became Ready
//	dev.knit.revision.failed  it failed (crash, readiness, build); the previous one keeps serving
//	dev.knit.route.updated    a Route deployed from Git changed its traffic or URLs
//	dev.knit.sync.failed      a commit could not be rendered or applied
//	dev.knit.canary.failed    a pull request's canary failed its analysis and was rolled back
//
// Events go to the EventSinks of the resource's namespace. Each carries
// the repository, branch, commit SHA, author and message, the Revision and
// its URL. Event ids derive from the object's UID and the condition's
// transition time (or the Route's generation and traffic, or a sync's
// commit and error), so an event re-announced — at a resync, after a
// restart — has the id it had; the dispatcher sends an id a sink already
// took once, and keeps undelivered events in knit-system across restarts
// (gitsync/eventstore). An EventSink's status counts what was delivered
// and dropped since it was created.
package announce
