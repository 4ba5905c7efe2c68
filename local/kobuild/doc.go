// Package kobuild builds the ko:// images of knit dev's replicas: a
// ko://<import path> is a Go program, built with `go build` in a module
// dir (ko://./dir relative to it), or, for an import path no module of
// the module dir's build list provides, installed with `GOBIN=<cache> go
// install <path>@latest`, as ko would build it from the required module.
//
// Binaries are kept in a cache directory under a key computed from `go
// list -deps` and the hashes of local sources (key.go says what goes in
// and why), so a rebuild when nothing changed costs one go list;
// concurrent builds of one image, or of one key, run once. A build logs
// its progress and writes its output to <cache>/<key>/build.log; a failed
// one is an *Error whose message holds the lines that say why.
//
// Which binary a replica runs, pinning it per pod template, and what a
// failed build does to a Deployment's status are package runtime's.
package kobuild
