// Package build turns the ko:// images a commit names into images a
// cluster can run: on a cluster nothing can execute `ko://./cmd/hello`, so
// knit builds it from exactly the commit's tree in a Kubernetes Job,
// pushes it to the registry the operator configured, and the Service is
// applied with the image's digest in place of the ko:// reference.
//
// Why a Job rather than the controller itself: a build needs a Go
// toolchain (hundreds of megabytes the controller image need not carry),
// CPU and memory the controller must not lose to a user's compile, and the
// registry's push credentials, which stay in knit's namespace under a
// ServiceAccount with no API rights. A Job is also what an operator
// already knows how to watch, limit and read the logs of.
//
// What decides a build is its Key: the toolchain image, the platform,
// the commit's root tree and the package. The same tree built again — a
// force-push of the same commit, a revert, an empty commit — has the same
// key, and the GitRepository's status.builds remembers each key's result,
// so it never runs twice. Builds are reproducible besides (-trimpath,
// -buildvcs=false, layers with fixed timestamps): equal keys give equal
// digests even when the record was lost.
//
// The builder (the knit-toolchain image's entrypoint, built from
// hack/images/cmd/knit-builder) reports its outcome as the container's
// termination message, a JSON Result; the controller reads it from the
// Job's pod once the Job finishes, so no build needs API access.
package build
