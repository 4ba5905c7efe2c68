// Package pack builds knit's container images without Docker and without a
// base image: one reproducible layer holding the given files, the shared
// libraries a dynamically linked program needs (its ldd closure), the few
// files every image needs (/etc/passwd and /etc/group with the nonroot user
// 65532, the build machine's CA bundle, an empty /tmp), and a config that
// runs as that user.
//
// Every entry has a fixed owner and modification time, entries are written
// in path order and identical files become hard links, so packing the same
// inputs twice gives the same digest.
package pack
