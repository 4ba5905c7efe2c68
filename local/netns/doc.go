// Package netns gives knit dev's isolated replicas (NetworkIsolated in
// package runtime) a network of their own, as a pod has one: a network
// namespace whose loopback only the replica's containers share, and a veth
// pair on a /30 of 169.254.64.0/18 (the host's end .1, the replica's eth0
// .2, its default route through the host's end) that is the only way in.
// The range is link-local, so no router forwards it, clear of
// 169.254.169.254, and the one package endpointslices trusts.
//
// A Pool hands out Namespaces, keeping one made ahead of need (Refill), so
// a cold start does not wait the 2–10 ms the kernel takes to make a
// namespace and a veth pair. A Namespace starts a command inside (Start,
// forking from a thread that stepped in and back) and is closed when the
// replica's last process is gone; its PodIP and HostIP are the addresses
// the runtime publishes and probes. Everything else about a replica —
// which ports it gets, who probes it, its EndpointSlices — is package
// runtime's.
//
// Network namespaces are Linux's and need root: elsewhere NewPool and Open
// fail, and knit dev (--replica-network auto) runs replicas in the shared
// network instead.
package netns
