//go:build !linux

package main

import "syscall"

// devSysProcAttr gives knit dev its own process group, so a Ctrl-C meant
// for the bench reaches knit dev only as the bench's SIGTERM.
func devSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// proxySysProcAttr is devSysProcAttr for the proxy processes.
func proxySysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
