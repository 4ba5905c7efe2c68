//go:build !linux

package runtime

import "syscall"

// childSysProcAttr puts a replica process in its own process group.
// Outside Linux there is no parent-death signal; Shutdown stops replicas.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
