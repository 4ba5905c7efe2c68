package main

import "syscall"

// devSysProcAttr gives knit dev its own process group, so a Ctrl-C meant
// for the bench reaches knit dev only as the bench's SIGTERM, and has the
// kernel stop it if the bench dies without stopping it.
func devSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// proxySysProcAttr is devSysProcAttr for the proxy processes, killed
// outright if the bench dies: nothing they do on the way out matters.
func proxySysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
