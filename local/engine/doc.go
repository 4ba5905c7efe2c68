// Package engine turns a Kubernetes container's resolved settings into an
// OCI runtime spec and drives runc to run it, for knit dev.
//
// It is data plus thin command wrappers on purpose: runc (Debian's 1.1 is
// the target) does all the namespace, mount, cgroup and security work, and
// this package only decides what to ask for. Spec mirrors what containerd's
// CRI plugin generates for a Kubernetes container, so that workloads behave
// under knit dev as they do on a real node: same default capabilities, same
// masked and read-only /proc paths, same seccomp RuntimeDefault, same
// mounts. The deviations, all stemming from knit dev running one runc per
// container inside the pod's network namespace instead of a sandbox
// container, are listed on Spec.
//
// The caller prepares the bundle directory: it mounts the image's root
// filesystem at <bundle>/rootfs, writes the spec with Runc.WriteBundle and
// starts the argv from Runc.RunArgv as a child it supervises.
package engine
