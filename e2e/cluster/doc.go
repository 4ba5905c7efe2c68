// Package cluster holds the journeys of knit on a real Kubernetes: the
// Helm chart installed on the single-node cluster `make cluster` builds
// from source (real kubelet, containerd, kube-proxy, CoreDNS), knit's
// images imported into its containerd by `make cluster-images`, and a user
// driving it with kubectl, HTTP through the ingress Service and git push.
//
// The tests carry the build tag `cluster` and run with `make test-cluster`
// (part of `make test` when it runs as root on Linux); they reach the node
// only through the veth `make cluster` sets up on this machine.
package cluster
