//go:build !linux

package controlplane

import "syscall"

// childSysProcAttr puts a child in its own process group. Only Linux has a
// parent-death signal; elsewhere Stop is the only way children end.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
