// Package plan turns what a commit renders into what knit applies: the
// pure half of a sync, with no client anywhere near it.
//
// It is where Git's model meets Knative's:
//
//   - a tracked branch is a Configuration: the main branch deploys each
//     Service under its own name, any other tracked branch under
//     <name>-<branch> (ServiceName);
//   - a commit is a Revision: a Service whose rendered template changed is
//     stamped <service>-<sha7> with the full SHA, author and message as
//     annotations, and a commit that leaves a Service's template as it was
//     keeps its current Revision (the template hash decides; for a Service
//     built from the repository itself, ko://./…, the hash covers the
//     app's sources too, so pushing code deploys it);
//   - a pull request is a rollout: its head's Revision,
//     <service>-pr<N>-<sha7>, is added to the base Service's traffic with
//     the tag pr-<N> and, when asked, a canary share taken proportionally
//     from the targets Git declares (WithCanaries).
//
// Every object gets the labels knit.dev/repository and knit.dev/branch and
// the annotation knit.dev/commit, and lands in the GitRepository's
// namespace.
package plan
