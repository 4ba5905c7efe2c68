// Package rollout decides the stepped rollout of a Service's new Revision
// after a push to a tracked branch: which plan is in force (the Service's
// knit.dev/rollout annotation, else its GitRepository's spec.rollout),
// when a push begins a rollout and against which Revision, how a waiting
// rollout starts its first step, and the traffic the Service is applied
// with meanwhile. It is pure: the GitRepository reconciler reads the
// cluster, asks here, and writes the answer to its status, the one
// writer of a rollout's state. Steps are judged as a pull request's
// canary is (package stepper).
package rollout
