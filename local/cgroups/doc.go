// Package cgroups gives knit dev's replicas the cgroups a kubelet gives a
// pod's containers: a tree below knit dev's own cgroup, as the kubelet's
// is below kubepods, <own>/knit-<instance>/pod<uid>/<container>, in cgroup
// v1's memory and cpu hierarchies or in v2's unified one.
//
// It is the mechanism only; package runtime decides which replica and
// container get one and reports what happens in them. OpenTree makes (or
// takes over) the tree and weighs it among its siblings (Shares); a
// replica's Pod holds a Container per container, made with the Limits
// ContainerLimits computes from its resources exactly as the kubelet does
// (memory limit without swap, a CFS quota per CPUPeriodMicros, shares or
// v2's weight). A process is born in its Container (Enter: v2's
// CLONE_INTO_CGROUP, or v1's forking thread joining it for the fork);
// View is the container's own cgroup bound read-only where an app in a pod
// reads its limits; OOMKills counts the kernel's OOM kills, which the
// runtime reports as OOMKilled; Kill and Remove end whatever a container
// left behind.
//
// Cgroups are Linux's: elsewhere OpenTree fails, and every method of a
// nil Tree, Pod or Container does nothing, so replicas run unlimited.
// Unenforced says which limits go unenforced, and why, for the runtime's
// one warning.
package cgroups
