//go:build !linux

package acmetest

import "syscall"

// childSysProcAttr puts the child in its own process group. Only Linux
// has a parent-death signal; elsewhere the test's cleanup is the only way
// it ends.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
