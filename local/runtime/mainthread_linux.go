package runtime

import goruntime "runtime"

// The main goroutine keeps the main thread for the life of the program,
// so that no other goroutine ever runs there. Replicas start from threads
// that enter a container's mount and UTS namespaces (and chroot) and are
// never unlocked, so they die with their goroutine — except the main
// thread, which Go cannot end: it would be parked with the container's
// namespaces, and as the thread group's leader it is what /proc/self
// shows. Two test runs of this package failed once each as if that had
// happened (this process's /proc/self/mountinfo without its cgroup
// hierarchies; /proc read wrong); a fork there cannot be ruled out
// otherwise. init runs on the main goroutine, on the main thread; nothing
// unlocks it.
func init() {
	goruntime.LockOSThread()
}
