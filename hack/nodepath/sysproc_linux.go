package main

import "syscall"

// childSysProcAttr has the kernel kill a control-plane process if this
// program dies without stopping it.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
