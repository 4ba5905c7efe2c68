//go:build !linux

package main

import "syscall"

// childSysProcAttr puts a control-plane process in its own group.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
