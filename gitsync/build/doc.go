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
// the repository's namespace, the commit's root tree and the package. The
// same tree built again — a force-push of the same commit, a revert, an
// empty commit — has the same key, so it never runs twice: the ledger
// (ledger.go, a ConfigMap per namespace in the build namespace, written
// only by the controller from the push step's result) records the image
// each key built, and only the ledger is believed — not status.builds,
// not a registry tag. Builds are reproducible besides (-trimpath,
// -buildvcs=false, layers with fixed timestamps): a key whose record was
// lost is built again to the same digest.
//
// The package of a ko:// image is an argument of go build: kopath refuses
// any that is not plainly one package (a flag such as -toolexec, a
// pattern, a path out of the repository) before a Job exists, and the
// builder passes "--" besides. A build pod runs its steps in containers
// of their own (job.go): fetch holds the Git credentials, compile runs
// the user's build with no credential, no ServiceAccount token and its
// namespace's own cache directory, and push holds the registry's
// credentials and reads only the compiled binary.
//
// The builder (the knit-toolchain image's entrypoint, built from
// hack/images/cmd/knit-builder) reports each step's outcome as its
// container's termination message, a JSON Result; the controller merges
// them from the Job's pod once the Job finishes (PodResult: the image from
// the push step alone), so no build needs API access.
package build
