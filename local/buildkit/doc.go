// Package buildkit builds dockerfile:// images for knit dev with BuildKit:
// it starts buildkitd and a CNCF Distribution registry on demand, as
// processes of knit dev with their state in its state directory, and runs
// buildctl for each build, reading its plain progress (progress.go).
//
// Why processes and not BuildKit linked into knit: buildkitd is a daemon
// with its own snapshotter, cache database and worker, meant to outlive
// one build (its layer cache is what makes a second build of a changed
// file take a second), and buildctl is its documented client; linking
// either would pull BuildKit's module graph into knit's and tie knit's
// Kubernetes and gRPC versions to BuildKit's. The registry is the one the
// test cluster runs, so knit dev's runtime pulls a built image the way a
// kubelet pulls it.
//
// What a user's RUN step can reach: only its own loopback. buildkitd runs
// steps in a network namespace made by the CNI loopback plugin alone, so
// a Dockerfile cannot reach knit dev's API server, Git server, registry
// or anything on this machine's network; no credential is in its
// environment (push goes to a loopback registry that needs none, and
// pulls of bases authenticate through buildctl's session, outside the
// step). A build that needs packages from the network is built outside
// knit dev, or its packages are vendored in the repository.
package buildkit
