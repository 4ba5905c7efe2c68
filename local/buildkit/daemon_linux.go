package buildkit

import "syscall"

// daemonAttrs puts a daemon in its own process group (a ^C at knit dev's
// terminal reaches knit dev, which stops it in order) and has the kernel
// stop it when knit dev dies without stopping it.
func daemonAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
