package runtime

import "syscall"

// childSysProcAttr puts a replica process in its own process group, so
// that stopping it reaches whatever it started, and has the kernel kill it
// when knit dev dies, however knit dev dies.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
