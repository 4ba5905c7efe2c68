package controlplane

import "syscall"

// childSysProcAttr puts a child in its own process group and has the
// kernel kill it when knit dies, however knit dies.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
