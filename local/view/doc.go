// Package view makes the view of the filesystem, the hostname and the
// privileges a container runtime gives a container, for the processes
// knit dev runs as containers on this machine (ko:// and knit://
// images; package engine and runc give an image's container its own).
//
// A Plan is what one container's process sees beyond this machine's
// filesystem: Mounts bound at their paths (a path that does not exist is
// made on a tmpfs mirror of its nearest existing directory, never on
// this machine), a /dev of its own and /proc's kernel settings read-only
// (System), the pod's Hostname in a UTS namespace, a directory covered
// by an empty read-only tmpfs with some of it bound back (Hide, Show:
// knit dev's state dir and its builds) and the Privileges its process
// may ever hold (the capability bounding set and no_new_privs). Enter
// makes it on the calling thread, in a mount namespace of its own, for
// the process that thread forks next; Join moves a thread into a running
// container's view, as nsenter does, for exec probes and hooks.
// PIDNamespace is the holder of a pod's shared PID namespace, as the
// pause container is on a node.
//
// It is the mechanism only: package runtime decides which container gets
// which view from its pod (containerView, mountsFor, processPrivileges),
// forks its processes and runs its probes. Mount namespaces need root on
// Linux: elsewhere Supported says why not (ErrUnsupported), a Plan that
// is not Empty fails to Enter, and containers run in knit dev's own view.
package view
