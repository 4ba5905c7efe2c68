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
// What a user's RUN step can reach follows one policy, the operator's
// (Options.AllowHosts, knit dev --build-allow-host):
//
//   - By default, nothing but its own loopback. buildkitd runs steps in a
//     network namespace made by the CNI loopback plugin alone, so a
//     Dockerfile cannot reach knit dev's API server, Git server, registry
//     or anything on this machine's network. knit dev cannot know which
//     package registries a user's builds need, so it allows none unasked;
//     a build that needs packages vendors them, or the operator names the
//     registries.
//   - With hosts allowed, each step also gets an interface on a bridge of
//     knit dev's (stepnet_linux.go) whose one other peer is a proxy
//     (package buildproxy) in a network namespace of its own: no default
//     route, no address of this machine, so a step reaches the allowed
//     hosts through the proxy, which its HTTP_PROXY and HTTPS_PROXY name
//     (proxyargs.go), and nothing else.
//
// Either way no credential is in a step's environment: push goes to a
// loopback registry that needs none, pulls of bases authenticate through
// buildctl's session, outside the step, and the proxy adds nothing of
// knit's to what it relays.
package buildkit
